using BlockDb.MicrosoftData.Raw;
using Microsoft.Data.Sqlite;
using Kind = BlockDb.Drivers.Native.TransactionStatements.StatementKind;

namespace BlockDb.MicrosoftData;

/// <summary>
/// A connection the driver opened with Microsoft.Data.Sqlite and owns. Microsoft.Data.Sqlite opens it (the connection
/// string: file, mode, pooling off) and closes it; BlockDb's statements, pragmas included, run through SQLitePCL.raw on its
/// <c>sqlite3*</c> (<see cref="RawConnection"/>), not through <c>SqliteCommand</c>. What Microsoft.Data.Sqlite's command path
/// guaranteed is kept: failures carry SQLite's primary and extended result codes (<see cref="BlockDbException"/>), and a
/// first step that meets <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is retried every 150 ms as its commands did, so a lock
/// held elsewhere surfaces after about <c>max(busy_timeout, 1 s)</c> (rounded up to whole seconds).
/// </summary>
internal sealed class MicrosoftDataConnection : RawConnection
{
    private readonly SqliteConnection _connection;

    private MicrosoftDataConnection(SqliteConnection connection, int busyRetryMilliseconds)
        : base(connection.Handle ?? throw new InvalidOperationException("Microsoft.Data.Sqlite's connection has no SQLite handle after Open."), busyRetryMilliseconds)
    {
        _connection = connection;
    }

    /// <summary>One <c>sqlite3_exec</c>, without the busy retry of <see cref="RawConnection.Execute"/>.</summary>
    public override void ExecuteWithoutRetry(string sql)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sql);
        var db = Live(nameof(ExecuteWithoutRetry));
        var rc = SQLitePCL.raw.sqlite3_exec(db, sql, out var message);
        if (rc != SQLitePCL.raw.SQLITE_OK)
        {
            throw RawErrors.FromExec(db, rc, $"Execute of '{sql}'", message);
        }
    }

    /// <summary>Finalizes BlockDb's statements, then closes the connection (<c>sqlite3_close_v2</c>, through Microsoft.Data.Sqlite).</summary>
    public override void Dispose()
    {
        if (IsReleased)
        {
            return;
        }

        Release("the connection was disposed");
        _connection.Dispose();
    }

    /// <summary>
    /// Opens <paramref name="connection"/> and wraps it; a failure becomes a <see cref="BlockDbException"/>.
    /// </summary>
    /// <param name="connection">Not yet open.</param>
    /// <param name="path">The file, for the message.</param>
    /// <param name="busyTimeoutMilliseconds">The configured <c>busy_timeout</c>: with it, the retry of a busy first step ends about <c>max(busy_timeout, 1 s)</c> (whole seconds) after the step began, as Microsoft.Data.Sqlite's command timeout did.</param>
    public static MicrosoftDataConnection Open(SqliteConnection connection, string path, int busyTimeoutMilliseconds)
    {
        try
        {
            connection.Open();
            return new MicrosoftDataConnection(connection, BusyRetryAfterHandler(busyTimeoutMilliseconds));
        }
        catch (SqliteException e)
        {
            connection.Dispose();
            throw new BlockDbException($"opening {Quoted.Path(path)}: {e.Message}", e.SqliteErrorCode, e.SqliteExtendedErrorCode, e);
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Microsoft.Data.Sqlite's command timeout was <c>busy_timeout</c> rounded up to whole seconds, at least 1 s, counted
    /// from the command's start; SQLite's busy handler has already waited <c>busy_timeout</c> when a step returns busy, so
    /// the retry covers the rest. Counting from the failure keeps the clock off every step.
    /// </summary>
    internal static int BusyRetryAfterHandler(int busyTimeoutMilliseconds)
    {
        var commandTimeout = Math.Max(1, (busyTimeoutMilliseconds + 999) / 1000) * 1000;
        return Math.Max(0, commandTimeout - busyTimeoutMilliseconds);
    }

    /// <summary>The driver's own connection runs every statement BlockDb gives it: BlockDb begins and ends its transactions on it.</summary>
    protected override Kind Guard(string sql, bool runsNow) => Kind.Other;
}
