namespace BlockDb;

/// <summary>The block index's on-disk layout and the memory of its in-memory structures.</summary>
public sealed class IndexOptions
{
    /// <summary>The smallest <see cref="KeyMapMemoryLimitMegabytes"/> accepted: 1 MB (about 100,000 blocks).</summary>
    public const int MinKeyMapMemoryLimitMegabytes = 1;

    /// <summary>The largest <see cref="KeyMapMemoryLimitMegabytes"/> accepted: 1,048,576 MB (1 TiB).</summary>
    public const int MaxKeyMapMemoryLimitMegabytes = 1_048_576;

    /// <summary>
    /// The layout of a new file. <see langword="null"/> (default): a new file gets
    /// <see cref="BlockLayout.KeyMap"/> and an existing file is opened with the layout recorded in it. A value:
    /// a new file gets that layout, and opening an existing file of another layout fails with
    /// <see cref="BlockDbFormatException"/> (nothing is converted).
    /// </summary>
    public BlockLayout? Layout { get; set; }

    /// <summary>
    /// The most memory, in megabytes (2^20 bytes), the <see cref="BlockLayout.KeyMap"/> layout's key map may
    /// use in one open database. Default 4096 (room for about 300 million blocks). When a new block would need
    /// more, the write fails with <see cref="BlockDbConfigurationException"/> before anything is written, and
    /// everything committed stays; opening a file whose blocks need more fails the same way on first use.
    /// Allowed: 1 to 1,048,576.
    /// </summary>
    public int KeyMapMemoryLimitMegabytes { get; set; } = 4096;

    /// <summary>The layout a new file gets when <see cref="Layout"/> is not set.</summary>
    public static BlockLayout DefaultLayout => BlockLayout.KeyMap;

    /// <summary>Checks the values.</summary>
    /// <exception cref="BlockDbConfigurationException">A value is out of range or not a defined layout.</exception>
    public void Validate()
    {
        OptionGuard.Defined(Layout, "BlockDb:Index:Layout");
        OptionGuard.InRange(KeyMapMemoryLimitMegabytes, MinKeyMapMemoryLimitMegabytes, MaxKeyMapMemoryLimitMegabytes, "BlockDb:Index:KeyMapMemoryLimitMegabytes", "megabytes");
    }
}
