using System.Data;
using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using Microsoft.Data.Sqlite;
using Kind = BlockDb.Drivers.Native.TransactionStatements.StatementKind;

namespace BlockDb.MicrosoftData.Borrowed;

/// <summary>
/// A caller's open Microsoft.Data.Sqlite connection, lent to BlockDb (<see cref="MicrosoftDataDriver.Borrow"/>).
/// BlockDb's statements run on the caller's <c>sqlite3*</c> through BlockDb's connection core (<see cref="NativeConnection"/>), so they
/// run inside whatever transaction the caller has open, with no <see cref="SqliteTransaction"/> object, and see the
/// caller's uncommitted rows. It never begins, commits or rolls back (X1, docs/ARCHITECTURE.md): such text is refused
/// before SQLite sees it. <c>SQLITE_BUSY</c> is not retried beyond the connection's own <c>busy_timeout</c>.
/// Disposing it finalizes only BlockDb's statements; the connection stays open and the caller's.
/// </summary>
/// <remarks>
/// When the caller closes its connection first, the <see cref="System.Data.Common.DbConnection.StateChange"/> event finalizes
/// BlockDb's statements at once, so SQLite's <c>sqlite3_close_v2</c> completes inside the caller's close and the file is
/// released then; every later call here throws <see cref="ObjectDisposedException"/>. The documented order is still:
/// dispose BlockDb, then close the connection.
/// </remarks>
internal sealed class BorrowedConnection : NativeConnection, ILentSqliteConnection
{
    private readonly SqliteConnection _owner;

    internal BorrowedConnection(SqliteConnection owner)
        : base(MicrosoftDataConnection.Pointer(owner.Handle ?? throw new InvalidOperationException("The connection has no SQLite handle; open it before lending it to BlockDb.")), path: null, busyRetryMilliseconds: 0)
    {
        _owner = owner;
        owner.StateChange += OnOwnerStateChange;
    }

    public ISqliteDriver Driver => MicrosoftDataDriver.Instance;

    public bool IsOpen => !IsReleased && _owner.State == ConnectionState.Open;

    /// <summary>Finalizes BlockDb's statements; the caller's connection stays open.</summary>
    public override void Dispose()
    {
        _owner.StateChange -= OnOwnerStateChange;
        _ = Release("this borrowed connection was disposed");
    }

    /// <summary>Refuses a statement that begins or ends a transaction, and a savepoint that would run now outside the caller's transaction (X1); a prepared savepoint is checked at each run.</summary>
    protected override Kind Guard(string sql, bool runsNow)
    {
        var kind = TransactionStatements.Classify(sql);
        if (kind == Kind.Transaction)
        {
            throw new InvalidOperationException(TransactionStatements.Refusal(sql));
        }

        if (kind == Kind.Savepoint && runsNow)
        {
            RequireTransactionForSavepoint(sql);
        }

        return kind;
    }

    private void OnOwnerStateChange(object? sender, StateChangeEventArgs e)
    {
        if (e.CurrentState != ConnectionState.Open)
        {
            _ = Release("the caller closed its connection");
        }
    }
}
