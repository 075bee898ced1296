namespace BlockDb.PostgreSql.Sessions;

/// <summary>What a shared-repository call does on the server: how <see cref="PgRetry"/> treats its cancellation token and a lost connection.</summary>
internal enum PgAccess
{
    /// <summary>Reads only: the token cancels it at any point (the statement too), and it runs once more after a lost connection.</summary>
    Read,

    /// <summary>
    /// Writes: the token is honoured until the statements are sent, never after, so a call that throws
    /// <see cref="OperationCanceledException"/> sent nothing, and one that sent its statements returns their committed
    /// result (Npgsql's cancellation could otherwise end the call while the server still commits it). Not run again after
    /// a lost connection: its first run may have committed.
    /// </summary>
    Write,

    /// <summary>As <see cref="Write"/>, but run once more after a lost connection, also uncancellable then: running it again cannot write twice (select-xor-insert).</summary>
    RepeatableWrite,
}
