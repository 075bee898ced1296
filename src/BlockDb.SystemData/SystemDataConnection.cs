using System.Data.SQLite;
using BlockDb.Drivers.AdoNet;

namespace BlockDb.SystemData;

/// <summary>What is specific to System.Data.SQLite: its exception type, its result codes and its autocommit state.</summary>
internal sealed class SystemDataConnection(SQLiteConnection connection) : AdoNetSqliteConnection(connection)
{
    public override bool InTransaction => !connection.AutoCommit;

    /// <summary>
    /// System.Data.SQLite leaves SQLite's extended result codes off, so <see cref="SQLiteException.ResultCode"/> is the
    /// primary code; the extended one is the connection's last error (<c>sqlite3_extended_errcode</c>), taken when it
    /// belongs to that primary code (read in the exception filter, before anything else runs on the connection).
    /// </summary>
    public static BlockDbException ToBlockDbException(SQLiteException e, string what, SQLiteConnection? connection)
    {
        var primary = (int)e.ResultCode & 0xFF;
        var extended = primary;
        if (connection is { State: System.Data.ConnectionState.Open })
        {
            var last = (int)connection.ExtendedResultCode();
            if ((last & 0xFF) == primary)
            {
                extended = last;
            }
        }

        return new BlockDbException($"{what}: {e.Message}", primary, extended, e);
    }

    /// <summary>Opens <paramref name="connection"/> and wraps it (a failure becomes a <see cref="BlockDbException"/>).</summary>
    public static SystemDataConnection Open(SQLiteConnection connection, string path) =>
        OpenAndWrap(connection, static c => new SystemDataConnection(c), static (e, what) => e is SQLiteException s ? ToBlockDbException(s, what, null) : null, path);

    /// <summary>System.Data.SQLite leaves a statement that failed in <c>sqlite3_step</c> un-reset, so binding it again would fail.</summary>
    protected override void ResetAfterFailure(System.Data.Common.DbCommand command)
    {
        try
        {
            ((SQLiteCommand)command).Reset(clearBindings: false, ignoreErrors: true);
        }
        catch (Exception e) when (e is SQLiteException or InvalidOperationException or ObjectDisposedException)
        {
            // The connection is unusable (closed or disposed): the next call reports that, not this cleanup.
        }
    }

    protected override BlockDbException? Translate(Exception exception, string what) =>
        exception is SQLiteException e ? ToBlockDbException(e, what, connection) : null;
}
