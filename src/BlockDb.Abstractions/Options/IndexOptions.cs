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
    /// The layout of a new file, and the one an existing file must have (else <see cref="BlockDbFormatException"/>,
    /// nothing converted). <see langword="null"/> (default): <see cref="DefaultLayout"/> for a new file, the recorded one
    /// for an existing file. <see cref="BlockLayout.Duplicati"/> is only recognised, never created.
    /// </summary>
    public BlockLayout? Layout { get; set; }

    /// <summary>
    /// The most memory, in megabytes (2^20 bytes), the <see cref="BlockLayout.KeyMap"/> layout's key map may hold in one
    /// open database. Default 4096 (about 250 million blocks). A new block that would need more fails with
    /// <see cref="BlockDbConfigurationException"/>, writing nothing; blocks already in the file that need more fail every
    /// call that needs the map until a reopen with a higher limit. Allowed: 1 to <see cref="MaxKeyMapMemoryLimitMegabytes"/>.
    /// </summary>
    public int KeyMapMemoryLimitMegabytes { get; set; } = 4096;

    /// <summary>
    /// Whether the <see cref="BlockLayout.KeyMap"/> layout keeps its key map in a file beside the database, so an open
    /// loads it instead of reading the whole <c>Block</c> table (about 1 s instead of 30 to 80 s at 100 million blocks).
    /// Default <see cref="KeyMapFileMode.OnDispose"/>; the other layouts have no key map. Configuration key
    /// <c>BlockDb:Index:KeyMapFile</c>: <c>OnDispose</c> or <c>Off</c>.
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
