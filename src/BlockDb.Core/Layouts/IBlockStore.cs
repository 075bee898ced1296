using BlockDb.Drivers;
using BlockDb.Sessions;
using BlockDb.Sqlite;
using BlockDb.Volumes;

namespace BlockDb.Layouts;

/// <summary>
/// How one block layout finds and writes blocks, for one session. Writes run through the session's
/// <see cref="SqliteTransaction"/>, which the store joins as its participant.
/// </summary>
internal interface IBlockStore : IBatchParticipant
{
    /// <summary>A block's ID, or <see langword="null"/> when the session's connection sees no such block (complete: never a miss for a visible block).</summary>
    long? Find(in HashInput hash, long size);

    /// <summary>Finds a block, inserting it when absent (recorded in <paramref name="volumeId"/>, checked then), in the session's batch.</summary>
    SelectXorInsertResult SelectXorInsert(in HashInput hash, long size, long? volumeId);

    /// <summary>
    /// Select-xor-insert of one block of a blockset, inside the open write transaction (the caller's, whose commits it
    /// holds), also saying what the store's own read tells about the block's volume in that transaction, so the
    /// blockset need not read the row again when it can tell.
    /// </summary>
    /// <exception cref="InvalidOperationException">The write transaction is not open.</exception>
    SelectXorInsertResult SelectXorInsertInWrite(in HashInput hash, long size, long? volumeId, out BlockVolume volume);

    /// <summary>Inserts a block recorded in <paramref name="volumeId"/>, failing with <c>SQLITE_CONSTRAINT</c> when it exists.</summary>
    long Insert(in HashInput hash, long size, long? volumeId);

    /// <summary>Reads a stored hash back as base64 text.</summary>
    string ReadHash(ISqliteStatement statement, int column);
}
