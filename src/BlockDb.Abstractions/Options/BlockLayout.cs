namespace BlockDb;

/// <summary>
/// How the <c>Block</c> table stores hashes and how a block is found by hash. The layout is part of the
/// file format: it is chosen when a file is created, recorded in the file, and read back on every open.
/// Measured per-op costs and the choice of default are in the repository's benchmark results (section "Scale").
/// </summary>
public enum BlockLayout
{
    /// <summary>
    /// Schema version 1 (Duplicati's): <c>Hash</c> as 44-character base64 TEXT with a unique index on
    /// (<c>Hash</c>, <c>Size</c>). Readable by any SQL written for Duplicati's schema; its per-op cost grows
    /// with the index (every new block dirties a random index page).
    /// </summary>
    TextHash = 0,

    /// <summary>
    /// Schema version 2: <c>Hash</c> as the decoded bytes (32 for SHA-256) in a BLOB, with a unique index on
    /// (<c>Hash</c>, <c>Size</c>). The index is about 30 % smaller than <see cref="TextHash"/>'s; the growth is the same kind.
    /// </summary>
    BlobHash = 1,

    /// <summary>
    /// Schema version 2: <c>Hash</c> as a BLOB and no hash index. Each open database keeps an in-memory key map from the
    /// hash to candidate IDs (about 10–16 MB per million blocks, <see cref="IndexOptions.KeyMapMemoryLimitMegabytes"/>),
    /// every hit verified against its row; new blocks are appended, so the cost per call stays nearly flat as the index
    /// grows. Other SQL tools find blocks by hash only with a table scan. Invariants: docs/ARCHITECTURE.md, "The key map".
    /// </summary>
    KeyMap = 2,

    /// <summary>
    /// A Duplicati local database (schema version 19,
    /// <see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/Main/Database/Local/Database%20schema/Schema.sql"/>),
    /// recognised at open (this value need not be set) and worked on in place by Duplicati's rules, with nothing of
    /// BlockDb's stored in it. BlockDb never creates, converts or repairs one; <see cref="IBlockDatabase.CheckAsync"/>
    /// also applies Duplicati's consistency rules (<see cref="BlockDbCheckResult.LayoutRules"/>).
    /// </summary>
    Duplicati = 3,
}
