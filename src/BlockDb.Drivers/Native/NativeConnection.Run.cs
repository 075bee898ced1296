namespace BlockDb.Drivers.Native;

// Text run at once (Execute, QueryText), the one-statement prepare, and the busy retry of a first step.
internal abstract unsafe partial class NativeConnection
{
    /// <summary>The pause between two tries of a busy statement: Microsoft.Data.Sqlite's, and the longest of System.Data.SQLite's random ones.</summary>
    private const int BusyPauseMilliseconds = 150;

    /// <summary>
    /// How long a busy first step is tried again after SQLite's busy handler gave up, so that a lock held elsewhere
    /// surfaces when the ADO.NET command timeout would have: <c>busy_timeout</c> rounded up to whole seconds, at least
    /// 1 s, counted from the command's start. SQLite's handler has already waited <c>busy_timeout</c> when a step returns
    /// busy, so the retry covers the rest; counting from the failure keeps the clock off every step.
    /// </summary>
    internal static int BusyRetryAfterHandler(int busyTimeoutMilliseconds)
    {
        var commandTimeout = Math.Max(1, (busyTimeoutMilliseconds + 999) / 1000) * 1000;
        return Math.Max(0, commandTimeout - busyTimeoutMilliseconds);
    }

    /// <summary>
    /// The ADO.NET providers' command-level retry: a first step that returned <c>SQLITE_BUSY</c> or <c>SQLITE_LOCKED</c> is
    /// reset and tried again every 150 ms until <see cref="BusyRetryMilliseconds"/> have passed. Returns at once
    /// (nothing on the hot path) when the first result is not one of those.
    /// </summary>
    internal int RetryIfBusy(nint stmt, int rc)
    {
        if (!IsBusy(rc) || BusyRetryMilliseconds == 0)
        {
            return rc;
        }

        var start = Environment.TickCount64;
        while (IsBusy(rc) && Environment.TickCount64 - start < BusyRetryMilliseconds)
        {
            _ = SqliteNative.sqlite3_reset(stmt);
            Thread.Sleep(BusyPauseMilliseconds);
            rc = SqliteNative.sqlite3_step(stmt);
        }

        return rc;
    }

    /// <summary>
    /// Opens a provider's ADO.NET <paramref name="connection"/> and wraps it (<paramref name="wrap"/>). On any failure the
    /// connection is disposed; a failure of the provider's library becomes a <see cref="BlockDbException"/> with the codes
    /// <paramref name="codes"/> reads from it (<see langword="null"/>: not the library's, rethrown as it is).
    /// </summary>
    internal static T OpenAndWrap<T>(System.Data.Common.DbConnection connection, string path, Func<T> wrap, Func<Exception, (int Primary, int Extended)?> codes)
    {
        try
        {
            connection.Open();
            return wrap();
        }
        catch (Exception e)
        {
            connection.Dispose();
            if (codes(e) is { } c)
            {
                throw new BlockDbException($"opening {Quoted.Path(path)}: {e.Message}", c.Primary, c.Extended, e);
            }

            throw;
        }
    }

    private static bool IsBusy(int rc) => (rc & 0xFF) is SqliteResultCode.Busy or SqliteResultCode.Locked;

    /// <summary>Runs each statement of <paramref name="sql"/> to completion, each checked by <see cref="Guard"/> first.</summary>
    private void Run(string sql, string call, bool retry)
    {
        ArgumentNullException.ThrowIfNull(sql);
        var db = Live(call);
        var context = $"{call} of '{sql}'{Where} failed";
        var text = NativeText.ToUtf8Z(sql);
        fixed (byte* start = text)
        {
            var end = start + text.Length - 1;
            var rest = start;
            while (rest < end)
            {
                nint stmt = 0;
                byte* tail = null;
                var rc = SqliteNative.sqlite3_prepare_v3(db, rest, (int)(end - rest), 0, &stmt, &tail);
                if (rc != SqliteCodes.Ok)
                {
                    throw SqliteErrors.FromConnection(db, rc, context);
                }

                if (stmt == 0)
                {
                    return; // only whitespace and comments were left
                }

                try
                {
                    _ = Guard(System.Text.Encoding.UTF8.GetString(rest, (int)(tail - rest)), runsNow: true);
                    rc = SqliteNative.sqlite3_step(stmt);
                    if (retry)
                    {
                        rc = RetryIfBusy(stmt, rc);
                    }

                    while (rc == SqliteCodes.Row)
                    {
                        rc = SqliteNative.sqlite3_step(stmt);
                    }

                    if (rc != SqliteCodes.Done)
                    {
                        throw SqliteErrors.FromConnection(db, rc, context);
                    }
                }
                finally
                {
                    _ = SqliteNative.sqlite3_finalize(stmt);
                }

                rest = tail;
            }
        }

        GC.KeepAlive(this);
    }

    /// <summary>Prepares exactly one SQL statement; throws when the text holds none, more than one, or SQLite fails.</summary>
    private static nint PrepareSingle(nint db, string sql, uint flags, string context)
    {
        var text = NativeText.ToUtf8Z(sql);
        var length = text.Length - 1;
        fixed (byte* pText = text)
        {
            nint stmt = 0;
            byte* tail = null;
            var rc = SqliteNative.sqlite3_prepare_v3(db, pText, length, flags, &stmt, &tail);
            if (rc != SqliteCodes.Ok)
            {
                throw SqliteErrors.FromConnection(db, rc, context);
            }

            if (stmt == 0)
            {
                throw PreparedText.NoStatement(context);
            }

            try
            {
                var rest = tail == null ? [] : new ReadOnlySpan<byte>(tail, (int)(pText + length - tail));
                PreparedText.CheckNoMoreStatements(rest, (ReadOnlySpan<byte> next, out bool found, out int consumed) => ProbeNext(db, next, out found, out consumed), context);
            }
            catch
            {
                _ = SqliteNative.sqlite3_finalize(stmt);
                throw;
            }

            return stmt;
        }
    }

    /// <summary>Prepares (and finalizes) the first statement of <paramref name="text"/>: <see cref="PreparedText.Probe"/> over this binding.</summary>
    private static int ProbeNext(nint db, ReadOnlySpan<byte> text, out bool found, out int consumed)
    {
        fixed (byte* pText = text)
        {
            nint next = 0;
            byte* nextTail = null;
            var rc = SqliteNative.sqlite3_prepare_v3(db, pText, text.Length, 0, &next, &nextTail);
            found = next != 0;
            if (found)
            {
                _ = SqliteNative.sqlite3_finalize(next);
            }

            consumed = nextTail == null ? 0 : (int)(nextTail - pText);
            return rc;
        }
    }
}
