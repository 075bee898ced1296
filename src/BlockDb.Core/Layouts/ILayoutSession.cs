using BlockDb.Drivers;
using BlockDb.Volumes;

namespace BlockDb.Layouts;

/// <summary>
/// How one layout finds and writes blocks on one session's connection: <see cref="KeyMap.KeyMapSession"/>,
/// <see cref="Indexed.IndexedSession{TCodec, TStrategy}"/> and <see cref="Duplicati.DuplicatiSession"/>, each one file from
/// the session's call to the statement step.
/// Implemented by readonly structs of references, so <see cref="Sqlite.SqliteSession{TLayout}"/> calls them without a
/// virtual call. Writes begin the session's <see cref="Sqlite.SqliteTransaction"/> when they need it and count themselves
/// (<see cref="Engine.EngineTransaction.Wrote"/>); the session's policy commits between calls [B1].
/// </summary>
internal interface ILayoutSession
{
    /// <summary>A block's ID, or null when the session's connection sees no such block (complete: never a miss for a visible block).</summary>
    /// <param name="block">The block, its hash decoded.</param>
    long? Find(in BlockKey block);

    /// <summary>Finds a block, inserting it when absent (recorded in <paramref name="volumeId"/>, checked then).</summary>
    SelectXorInsertResult SelectXorInsert(in BlockKey block, long? volumeId);

    /// <summary>
    /// A one-call file's lookup of one block inside the open write transaction, writing nothing: the block's ID (complete:
    /// never a miss for a stored block), or null; and what the read tells about the block's volume in that transaction,
    /// so the blockset need not read the row again when it can tell (a found block is one read where the layout's lookup
    /// can join its volume's state). Every block of the file is looked up before the first is inserted
    /// (<see cref="InsertMissingInWrite"/>), so every refusal comes before the call's first write.
    /// </summary>
    /// <exception cref="InvalidOperationException">The write transaction is not open.</exception>
    long? FindInWrite(in BlockKey block, out BlockVolume volume);

    /// <summary>
    /// After <see cref="FindInWrite"/> found no such block in this transaction, and
    /// nothing of this call inserted it since (the blockset inserts each missing key once): writes it, recorded in
    /// <paramref name="volumeId"/>, checked then, and counts the write. A layout that keeps deleted blocks (Duplicati's
    /// <c>DeletedBlock</c>) may take the block back instead (not created; its volume then <see cref="BlockVolume.Unknown"/>).
    /// </summary>
    /// <exception cref="InvalidOperationException">The write transaction is not open.</exception>
    SelectXorInsertResult InsertMissingInWrite(in BlockKey block, long? volumeId, out BlockVolume volume);

    /// <summary>
    /// Before a one-call file's lookups, inside the open write transaction: the blocks this layout can find for fewer
    /// statements together than one by one, each ID into <paramref name="ids"/> and what its read says of its volume into
    /// <paramref name="volumes"/> (at the block's index); the rest are left 0, for <see cref="FindInWrite"/>. A block
    /// found here is stored in this transaction and stays so for the call (the call deletes nothing). By default none
    /// (one read per block costs no more there).
    /// </summary>
    /// <exception cref="InvalidOperationException">The write transaction is not open.</exception>
    void FindStoredInWrite(ReadOnlySpan<BlockKey> blocks, Span<long> ids, Span<BlockVolume> volumes)
    {
    }

    /// <summary>
    /// After <see cref="FindInWrite"/> missed <paramref name="count"/> distinct blocks of a one-call file, before the first
    /// is inserted (<see cref="InsertMissingInWrite"/>): refuses, writing nothing, a file whose new blocks the layout has
    /// no IDs left for, so that no such refusal comes among the writes (which may run with no savepoint). By default
    /// none (SQLite chooses the IDs).
    /// </summary>
    /// <exception cref="BlockDbException">The layout's IDs are used up.</exception>
    void RequireRoomInWrite(int count)
    {
    }

    /// <summary>Reads a stored hash back as bytes.</summary>
    BlockHash ReadBinaryHash(ISqliteStatement statement, int column);
}
