namespace BlockDb;

/// <summary>
/// How select-xor-insert finds a block's ID or creates the block on the layouts with a unique (Hash, Size) index
/// (<see cref="BlockLayout.TextHash"/>, <see cref="BlockLayout.BlobHash"/>). All give the same IDs; they differ in speed.
/// The <see cref="BlockLayout.KeyMap"/> layout runs only <see cref="SelectThenInsert"/> and refuses the others.
/// </summary>
public enum SelectXorInsertStrategy
{
    /// <summary><c>SELECT</c> by hash and size, then <c>INSERT</c> when absent: one statement for a known block, two for a new one (Duplicati's way).</summary>
    SelectThenInsert = 0,

    /// <summary>
    /// <c>INSERT OR IGNORE</c>; a new block's ID is <c>last_insert_rowid()</c>, a known block's comes from a <c>SELECT</c>:
    /// one statement for a new block, two for a known one.
    /// </summary>
    InsertOrIgnoreThenSelect = 1,

    /// <summary>
    /// <c>INSERT … ON CONFLICT DO NOTHING RETURNING "ID"</c>, then <c>SELECT</c> only when the block existed: one statement
    /// for a new block, two for a known one. Slower than <see cref="InsertOrIgnoreThenSelect"/>: SQLite runs every
    /// <c>RETURNING</c> statement through an ephemeral table and a statement journal
    /// (<see href="https://www.sqlite.org/lang_returning.html"/>).
    /// </summary>
    InsertReturningThenSelect = 2,
}
