using BlockDb.Drivers;
using BlockDb.Engine;

namespace BlockDb.Sqlite;

/// <summary>
/// The caller's connection of a database in External mode (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>):
/// the only connection BlockDb uses for that database, for the schema check, the session, the check and the listings
/// [X3]. Hands out <see cref="View"/>s, each finalizing only the statements it prepared, so a session or a cursor ends
/// without ending the loan; the database's dispose ends the loan (BlockDb's statements finalized, the caller's connection
/// left open). Holds the one-session slot.
/// </summary>
internal sealed class CallerConnection(ILentSqliteConnection lent) : IDisposable
{
    private int _session;

    /// <summary>The driver that lent the connection.</summary>
    public ISqliteDriver Driver => lent.Driver;

    /// <summary>The main database's file, as SQLite opened it (empty for an in-memory or temporary one).</summary>
    public string FileName => lent.FileName;

    /// <summary>Whether the caller's connection is open.</summary>
    public bool IsOpen => lent.IsOpen;

    /// <summary>Throws unless the caller's transaction is open [X2]: BlockDb never begins one.</summary>
    /// <exception cref="ObjectDisposedException">The caller closed its connection.</exception>
    /// <exception cref="InvalidOperationException">No transaction is open on it.</exception>
    public void RequireTransaction()
    {
        if (!lent.InTransaction)
        {
            throw Errors.NoCallerTransaction();
        }
    }

    /// <summary>A view of the connection whose dispose finalizes only what it prepared.</summary>
    public ISqliteConnection View() => new ConnectionView(lent);

    /// <summary>Takes the one session slot.</summary>
    /// <exception cref="InvalidOperationException">A session is open already.</exception>
    public void TakeSession()
    {
        if (Interlocked.CompareExchange(ref _session, 1, 0) != 0)
        {
            throw new InvalidOperationException("A BlockDb session is already open on the caller's connection; one connection runs one session at a time (dispose it first). Its statements run in the caller's one transaction.");
        }
    }

    /// <summary>Gives the session slot back.</summary>
    public void ReturnSession() => Volatile.Write(ref _session, 0);

    /// <summary>Ends the loan: BlockDb's statements are finalized; the caller's connection stays open.</summary>
    public void Dispose() => lent.Dispose();

    /// <summary>The connection, with the statements prepared through this view finalized at its dispose (and only those).</summary>
    private sealed class ConnectionView(ILentSqliteConnection connection) : ISqliteConnection
    {
        private readonly List<ISqliteStatement> _statements = [];

        public bool InTransaction => connection.InTransaction;

        public string FileName => connection.FileName;

        public long LastInsertRowId => connection.LastInsertRowId;

        public ISqliteStatement Prepare(SqlStatement statement)
        {
            var prepared = connection.Prepare(statement);
            _statements.Add(prepared);
            return prepared;
        }

        public void Execute(string sql) => connection.Execute(sql);

        public void ExecuteWithoutRetry(string sql) => connection.ExecuteWithoutRetry(sql);

        public string? QueryText(string sql) => connection.QueryText(sql);

        public SqliteCacheStats? ReadCacheStats() => connection.IsOpen ? connection.ReadCacheStats() : null;

        public void Dispose()
        {
            foreach (var statement in _statements)
            {
                statement.Dispose();
            }

            _statements.Clear();
        }
    }
}
