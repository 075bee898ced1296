namespace BlockDb;

/// <summary>The block index's on-disk layout and the memory of its in-memory structures.</summary>
public sealed class IndexOptions
{
    /// <summary>The smallest <see cref="KeyMapMemoryLimitMegabytes"/> accepted: 1 MB (about 100,000 blocks).</summary>
    public const int MinKeyMapMemoryLimitMegabytes = 1;

    /// <summary>
    /// The largest <see cref="KeyMapMemoryLimitMegabytes"/> accepted: 16,383 MB, the most one .NET array of 8-byte
    /// slots can hold (<see cref="Array.MaxLength"/> elements), room for about 1.4 billion blocks.
    /// </summary>
    public const int MaxKeyMapMemoryLimitMegabytes = 16_383;

    /// <summary>
    /// The layout of a new file. <see langword="null"/> (default): a new file gets
    /// <see cref="BlockLayout.KeyMap"/> and an existing file is opened with the layout recorded in it. A value:
    /// a new file gets that layout, and opening an existing file of another layout fails with
    /// <see cref="BlockDbFormatException"/> (nothing is converted). <see cref="BlockLayout.Duplicati"/> is never given to
    /// a new file: with it a path that does not exist, or an empty file, fails with <see cref="BlockDbFormatException"/>
    /// and nothing is created (an existing Duplicati database is recognised with this setting unset too).
    /// </summary>
    public BlockLayout? Layout { get; set; }

    /// <summary>
    /// The most memory, in megabytes (2^20 bytes), the <see cref="BlockLayout.KeyMap"/> layout's key map may
    /// hold at any moment in one open database, counting both tables while it grows. Default 4096 (room for about
    /// 250 million blocks). When a new block would need more, the write fails with
    /// <see cref="BlockDbConfigurationException"/> before anything is written, and everything committed stays;
    /// when the blocks already in the file need more, every call that needs the map fails the same way (first
    /// and later calls alike) until the database is reopened with a higher limit.
    /// Allowed: 1 to <see cref="MaxKeyMapMemoryLimitMegabytes"/> (16,383).
    /// </summary>
    public int KeyMapMemoryLimitMegabytes { get; set; } = 4096;

    /// <summary>
    /// Whether the <see cref="BlockLayout.KeyMap"/> layout writes its key map to a file beside the database
    /// when the database is disposed, and loads it at the next open instead of reading the whole <c>Block</c> table
    /// (measured: about 0.2 s instead of 2 to 6 s at 10 million blocks, 1 s instead of 30 to 80 s at 100 million; see
    /// <see cref="KeyMapFileMode"/>). Default <see cref="KeyMapFileMode.OnDispose"/>. Ignored by the other
    /// layouts. Configuration key <c>BlockDb:Index:KeyMapFile</c>; allowed: <c>OnDispose</c>, <c>Off</c>; any other
    /// value makes <see cref="Validate"/> (and so building the database) throw <see cref="BlockDbConfigurationException"/>.
    /// A key map file that cannot be read or written never makes a call fail: it is logged and the map is read from the table.
    /// </summary>
    public KeyMapFileMode KeyMapFile { get; set; } = KeyMapFileMode.OnDispose;

    /// <summary>The layout a new file gets when <see cref="Layout"/> is not set.</summary>
    public static BlockLayout DefaultLayout => BlockLayout.KeyMap;

    /// <summary>A copy of these options (changing one does not change the other).</summary>
    /// <returns>The copy.</returns>
    internal IndexOptions Clone() => (IndexOptions)MemberwiseClone();

    /// <summary>Checks the values.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range, or not a defined layout or snapshot mode.</exception>
    internal void Validate()
    {
        OptionGuard.Defined(Layout, "BlockDb:Index:Layout");
        OptionGuard.Defined(KeyMapFile, "BlockDb:Index:KeyMapFile");
        OptionGuard.InRange(KeyMapMemoryLimitMegabytes, MinKeyMapMemoryLimitMegabytes, MaxKeyMapMemoryLimitMegabytes, "BlockDb:Index:KeyMapMemoryLimitMegabytes", "megabytes");
    }
}
