namespace BlockDb.Drivers;

public static partial class SqliteCloseGuard
{
    /// <summary>A connection whose dispose goes through its file's gate; every other member is the inner connection's.</summary>
    private sealed class GuardedConnection(
        ISqliteConnection inner, FileGate gate, SqliteOpenOptions options, Func<SqliteOpenOptions, ISqliteConnection> open) : ISqliteConnection
    {
        private int _disposed;

        public bool InTransaction => inner.InTransaction;

        public long LastInsertRowId => inner.LastInsertRowId;

        public ISqliteStatement Prepare(SqlStatement statement) => inner.Prepare(statement);

        public void Execute(string sql) => inner.Execute(sql);

        public void ExecuteWithoutRetry(string sql) => inner.ExecuteWithoutRetry(sql);

        public string? QueryText(string sql) => inner.QueryText(sql);

        public SqliteCacheStats? ReadCacheStats() => inner.ReadCacheStats();

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                gate.Close(inner, options, open);
            }
        }
    }
}
