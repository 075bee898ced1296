using BlockDb.Volumes;

namespace BlockDb.Engine;

/// <summary>
/// The messages of the errors the session, its gate, its commit batch and the input checks throw, in one place
/// (issue 23: the other messages move here step by step). Each builds the exception; the call site throws it.
/// </summary>
internal static class Errors
{
    public static InvalidOperationException ConcurrentCall() =>
        new("This BlockDb session is already running a call. Sessions are not thread-safe: await each call before the next, or open one session per task.");

    public static InvalidOperationException DisposeInsideOwnCall() =>
        new("A BlockDb session cannot be disposed from inside one of its own calls (the dispose would wait for the call that makes it); dispose it after the call returns.");

    /// <summary>The error of a call made on, or woken by, a disposed shared session [S3].</summary>
    public static ObjectDisposedException SharedDisposed() =>
        new(nameof(ISharedBlockSession), "The shared BlockDb session was disposed; this call did not run.");

    public static InvalidOperationException NotInWriteTransaction() =>
        new("This write must run inside the session's open write transaction.");

    /// <summary>The engine rolled the open batch back on its own after <paramref name="e"/> [B2].</summary>
    public static BlockDbBatchRolledBackException BatchLost(Exception e, int writes)
    {
        var cause = Cause(e);
        return new($"{cause.Message} SQLite rolled back the open batch: its {writes} uncommitted writes were discarded (committed data is intact).", writes, cause);
    }

    /// <summary>A failure as the cause of a lost batch: whatever its type, the caller must learn that the batch is gone (its earlier writes with it).</summary>
    private static BlockDbException Cause(Exception e) => e as BlockDbException ?? new BlockDbException($"{e.GetType().Name}: {e.Message}", e);

    /// <summary>The open batch's transaction was found ended when the next write began [B2].</summary>
    public static BlockDbBatchRolledBackException BatchEndedEarlier(int writes) =>
        new($"The open batch's transaction was rolled back by SQLite after an earlier failure; its {writes} uncommitted writes were discarded (committed data is intact). Nothing was written by this call.",
            writes,
            new BlockDbException("The transaction is no longer active.", SqliteResultCode.Error, SqliteResultCode.Error, null));

    /// <summary>A failed <c>COMMIT</c>: rolled back, or with an unknown outcome [B3].</summary>
    public static BlockDbBatchRolledBackException CommitFailed(BlockDbException e, int writes, bool unknown, BlockDbException? rollbackFailure) =>
        new(unknown
                ? $"{e.Message} The COMMIT failed after SQLite may have made the batch durable: whether its {writes} writes are in the file is unknown. Repeat them (select-xor-insert returns the ID of a block that did commit); data committed before is intact."
                : $"{e.Message} The commit failed and its batch of {writes} writes was rolled back{(rollbackFailure is null ? string.Empty : $" (the ROLLBACK also failed: {rollbackFailure.Message}; the next write ends the transaction first)")} (committed data is intact).",
            writes,
            e,
            unknown);

    /// <summary>A rollback to a savepoint failed, so the whole batch was rolled back.</summary>
    public static BlockDbBatchRolledBackException SavepointUndoFailed(BlockDbException undo, Exception write, int writes) =>
        new($"{undo.Message} A write failed ({write.Message}) and rolling back to its savepoint failed too, so the open batch was rolled back: its {writes} uncommitted writes were discarded (committed data is intact).",
            writes,
            undo);

    /// <summary>A write failed after every check of its call had passed, with no savepoint to undo the call alone, so the batch was rolled back.</summary>
    public static BlockDbBatchRolledBackException WritesFailedBatchRolledBack(Exception e, int writes)
    {
        var cause = Cause(e);
        return new($"{cause.Message} A write of this call failed after all its checks had passed; the call's writes take no savepoint of their own, so the open batch was rolled back with them: its {writes} uncommitted writes were discarded (committed data is intact).", writes, cause);
    }

    /// <summary>The WAL under the connection was deleted or replaced: what a <c>COMMIT</c> would write is lost.</summary>
    public static BlockDbException WalLost(string walPath) =>
        new($"The WAL file '{walPath}' was deleted or replaced while this session's connection had it open: SQLite would write this commit into a file that is no longer the database's, and it would be lost when the last connection closes (https://www.sqlite.org/howtocorrupt.html).",
            SqliteResultCode.ReadOnly,
            SqliteResultCode.ReadOnlyDbMoved,
            null);

    public static BlockDbBatchRolledBackException BatchRolledBackForLostWal(BlockDbException cause, int writes) =>
        new($"{cause.Message} The batch of {writes} writes was rolled back, not committed. Commits acknowledged since the last checkpoint were in that WAL and may be lost too; close every connection to the file in every process, check it (CheckAsync), and write again what is missing.",
            writes,
            cause);

    /// <summary>A call on a caller's connection found no transaction open [X2].</summary>
    public static InvalidOperationException NoCallerTransaction() =>
        new("BlockDb works inside the caller's transaction and never begins one (X2): no transaction is open on the caller's connection. Begin it first (SqliteConnection.BeginTransaction) and call again; nothing was written.");

    /// <summary>A commit or rollback asked of a session on a caller's connection.</summary>
    public static InvalidOperationException TransactionIsCallers(string operation) =>
        new($"{operation} is refused: the transaction is the caller's. BlockDb never commits or rolls back on a caller's connection (X1); commit or roll back the caller's own transaction, which holds BlockDb's rows with its own.");

    /// <summary>SQLite ended the caller's transaction during a call [X2].</summary>
    public static BlockDbBatchRolledBackException CallerTransactionLost(Exception e, int writes)
    {
        var cause = Cause(e);
        return new($"{cause.Message} SQLite rolled back the caller's transaction (X2): everything since the caller's last commit is gone, its rows and BlockDb's; every ID BlockDb returned since then is void. Begin a new transaction and repeat the work.", writes, cause);
    }

    /// <summary>Undoing a failed call's writes inside the caller's transaction failed: they may still be in it.</summary>
    public static BlockDbException StepUndoFailed(BlockDbException undo, Exception write) =>
        new($"{undo.Message} A write failed ({write.Message}) and BlockDb could not undo its writes of this call (ROLLBACK TO its savepoint failed), so some of them may be in the caller's transaction. BlockDb never rolls back the caller's transaction (X1): roll it back.",
            undo.SqliteErrorCode ?? SqliteResultCode.Error,
            undo.SqliteExtendedErrorCode ?? SqliteResultCode.Error,
            undo);

    public static ArgumentException ResultsTooShort(int results, int blocks) =>
        new($"The results buffer holds {results} results and there are {blocks} blocks; give a buffer at least as long as the blocks.", "results");

    public static ArgumentOutOfRangeException BlocksetTooLong(long size, int index) =>
        new("blocks", size, $"The blockset's length passes {long.MaxValue:N0} bytes at block {index} ({size:N0} bytes); a blockset's Length is the sum of its blocks' sizes and must fit a 64-bit integer. Nothing of the blockset was written.");

    public static ArgumentException BlockKeyDefault() =>
        new("The block key is default(BlockKey), which names no block; make one with new BlockKey(hash, size) or BlockKey.Parse(base64Hash, size).", "block");

    public static ArgumentException SpanBlockDefault(int index) =>
        new($"Block {index} is default(BlockKey), which names no block; make each key with new BlockKey(hash, size) or BlockKey.Parse(base64Hash, size). Nothing was written.", "blocks");

    public static ArgumentException VolumeNameInvalid(string name, string problem) =>
        new($"The volume name {Quoted.Value(name)} ({name.Length} characters) {problem}; a volume name is 1 to {VolumeRules.MaxNameLength:N0} characters of valid UTF-16 with no control character and no whitespace at either end, such as duplicati-b1234.dblock.zip.", "name");

    public static ArgumentOutOfRangeException VolumeStateUndefined(VolumeState state) =>
        new("state", state, $"Not a volume state; allowed: {string.Join(", ", Enum.GetNames<VolumeState>())}.");

    public static ArgumentOutOfRangeException VolumeStateNotNew(VolumeState state) =>
        new("state", state, $"A volume cannot be registered as {state}; a new volume starts in one of {string.Join(", ", Enum.GetValues<VolumeState>().Where(s => !VolumeRules.IsGoing(s)))}, and reaches {VolumeState.Deleting} and {VolumeState.Deleted} through SetVolumeStateAsync.");

    public static ArgumentOutOfRangeException VolumeSizeNegative(long size) =>
        new("size", size, "A volume's size is a number of bytes, 0 or more.");
}
