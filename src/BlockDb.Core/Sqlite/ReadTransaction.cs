using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Sqlite;

/// <summary>
/// A session's read batch: reads outside a write batch share one read transaction (<c>BEGIN DEFERRED</c>, a WAL
/// snapshot taken by its first read), so each lookup does not open and close a read transaction of its own
/// (<see href="https://www.sqlite.org/wal.html"/>). Owned by the session's <see cref="SqliteTransaction"/> and used only
/// inside the session's gate.
/// </summary>
/// <remarks>
/// Invariants: <see cref="IsOpen"/> is true only while this session holds a transaction with no write in it; it is
/// never open at the same time as the write transaction [R1] (which ends it before <c>BEGIN IMMEDIATE</c>, so a write
/// always starts from a fresh snapshot and never fails to upgrade); it is ended after
/// <see cref="BatchingOptions.ReadsPerTransaction"/> reads, once <see cref="BatchingOptions.ReadTransactionMilliseconds"/>
/// old (by the idle timer when the session is idle), at a commit or rollback call, after a failed read, and at dispose
/// [R2], and when another session of the database committed (<see cref="CommitClock"/>), so a read never misses a commit
/// acknowledged before it began [R3].
/// </remarks>
internal sealed class ReadTransaction
{
    private readonly ISqliteConnection _connection;
    private readonly CommitClock _clock;
    private readonly ISqliteStatement? _begin;
    private readonly ISqliteStatement? _commit;
    private readonly ISqliteStatement? _rollback;
    private readonly int _limit;
    private int _reads;
    private long _started;
    private long _endsAt;
    private long _clockSeen;

    /// <param name="connection">The session's connection.</param>
    /// <param name="limit">Reads per transaction; 1 turns read batching off.</param>
    /// <param name="milliseconds">The longest a read transaction is held.</param>
    /// <param name="clock">The database's commit counter.</param>
    public ReadTransaction(ISqliteConnection connection, int limit, int milliseconds, CommitClock clock)
    {
        _connection = connection;
        _clock = clock;
        _limit = limit;
        Milliseconds = milliseconds;
        if (limit > 1)
        {
            _begin = connection.Prepare(BlockDbSql.BeginReadBatch);
            _commit = connection.Prepare(BlockDbSql.Commit);
            _rollback = connection.Prepare(BlockDbSql.Rollback);
        }
    }

    /// <summary>Whether reads are batched (more than one read per transaction).</summary>
    public bool Enabled => _limit > 1;

    /// <summary>The longest a read transaction is held, in milliseconds.</summary>
    public int Milliseconds { get; }

    /// <summary>Whether a read transaction is open.</summary>
    public bool IsOpen { get; private set; }

    /// <summary>Milliseconds since the open read transaction began (0 when none is open).</summary>
    public long AgeMilliseconds => IsOpen ? (long)Stopwatch.GetElapsedTime(_started).TotalMilliseconds : 0;

    /// <summary>Called after a read transaction opens (the session's timer arms itself to release it when idle).</summary>
    public Action? Opened { get; set; }

    /// <summary>
    /// Before a read outside the write batch: joins the open read transaction, or (when it is full, old, or another
    /// session committed since it began) ends it and begins a new one. Does nothing when read batching is off.
    /// </summary>
    public void Enter()
    {
        if (_begin is null)
        {
            return;
        }

        if (IsOpen)
        {
            if (_reads < _limit && _clock.Value == _clockSeen && Stopwatch.GetTimestamp() < _endsAt && _connection.InTransaction)
            {
                _reads++;
                return;
            }

            End();
        }

        // The clock is read before the snapshot is taken: a commit counted after this is either in the snapshot or restarts it.
        _clockSeen = _clock.Value;
        _begin.ExecuteNonQuery();
        (IsOpen, _reads, _started) = (true, 1, Stopwatch.GetTimestamp());
        _endsAt = _started + (Milliseconds * Stopwatch.Frequency / 1000);
        Opened?.Invoke();
    }

    /// <summary>Ends the open read transaction, if any (it holds no write, so ending it loses nothing).</summary>
    public void End()
    {
        if (!IsOpen)
        {
            return;
        }

        IsOpen = false;
        if (_connection.InTransaction)
        {
            _commit!.ExecuteNonQuery();
        }
    }

    /// <summary>After a failed read: ends the read transaction without throwing, so the next read starts afresh.</summary>
    public void Abandon()
    {
        if (!IsOpen)
        {
            return;
        }

        IsOpen = false;
        try
        {
            if (_connection.InTransaction)
            {
                _rollback!.ExecuteNonQuery();
            }
        }
        catch (BlockDbException)
        {
            // The read's own failure is what the caller sees; a read transaction holds no write, and the next BEGIN says what is wrong.
        }
    }
}
