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
    /// Schema version 2: <c>Hash</c> as a BLOB and no hash index in SQLite. Each open database keeps an in-memory
    /// key map (8 bytes per slot, about 10–16 MB per million blocks, bounded by
    /// <see cref="IndexOptions.KeyMapMemoryLimitMegabytes"/>) from a 32-bit fingerprint of the hash to the block
    /// ID, built by one scan of <c>Block</c> on first use and brought up to date from rows with higher IDs before
    /// each lookup that misses. Every map hit is verified against the row, so a stale entry can never return a
    /// wrong ID; uniqueness holds because BlockDb checks the map under the write lock before inserting. New
    /// blocks are appended to the table, so the per-op cost stays nearly flat as the index grows. Other SQL
    /// tools reading the file find blocks by hash only with a table scan.
    /// </summary>
    KeyMap = 2,

    /// <summary>
    /// A Duplicati local database (schema version 19: its <c>Version</c> table, its 19 tables and the <c>File</c> view;
    /// see <see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/Main/Database/Local/Database%20schema/Schema.sql"/>),
    /// worked on in place. BlockDb recognises such a file when it opens it (this value need not be configured) and stores
    /// nothing of its own in it: no table, no header field, no persistent pragma. The block size and hash algorithms are
    /// Duplicati's (<c>Configuration</c>). BlockDb never creates such a file (Duplicati does), never converts one and
    /// never repairs one (Duplicati's own <c>repair</c> does); in this build its sessions are refused
    /// (<see cref="NotSupportedException"/>); the database's enumerations work, and <see cref="IBlockDatabase.CheckAsync"/>
    /// applies Duplicati's consistency rules besides BlockDb's own (<see cref="BlockDbCheckResult.LayoutRules"/>).
    /// </summary>
    Duplicati = 3,
}
