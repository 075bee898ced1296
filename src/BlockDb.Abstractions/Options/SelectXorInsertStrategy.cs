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

    /// <summary><c>INSERT OR IGNORE</c>, then <c>SELECT</c>: always two statements.</summary>
    InsertOrIgnoreThenSelect = 1,

    /// <summary><c>INSERT … ON CONFLICT DO NOTHING RETURNING "ID"</c>, then <c>SELECT</c> only when the block existed: one statement for a new block, two for a known one.</summary>
    InsertReturningThenSelect = 2,
}
