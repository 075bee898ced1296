using BlockDb.Drivers;

namespace BlockDb.Tests.Support;

/// <summary>
/// A SQLite driver over another that records each prepared statement BlockDb runs (<see cref="ISqliteStatement.Step"/>,
/// <see cref="ISqliteStatement.ExecuteNonQuery"/>) while <see cref="On"/> is set: what a call costs in statements,
/// counted on a standalone database as <see cref="StatementTracer"/> counts them on a caller's connection.
/// </summary>
internal sealed class StatementCountingDriver(ISqliteDriver inner) : ISqliteDriver
{
    public string Name => inner.Name;

    public string NativeLibraryVersion => inner.NativeLibraryVersion;

    /// <summary>Whether statements are recorded now.</summary>
    public bool On { get; set; }

    /// <summary>The statements recorded, in order: one per step (a statement that returns rows, once per row and once at its end).</summary>
    public List<SqlStatement> Statements { get; } = [];

    /// <summary>The statements recorded, in order: one per execution (its first step after a reset, or a non-query).</summary>
    public List<SqlStatement> Executions { get; } = [];

    /// <summary>Called before each execution (a statement's first step after a reset, or a non-query), whether or not <see cref="On"/> is set: a test's hook into the middle of a call.</summary>
    public Action<SqlStatement>? BeforeExecution { get; set; }

    public ISqliteConnection Open(SqliteOpenOptions options) => new Connection(this, inner.Open(options));

    private void Record(SqlStatement statement, bool starts)
    {
        if (starts)
        {
            BeforeExecution?.Invoke(statement);
        }

        if (On)
        {
            Statements.Add(statement);
            if (starts)
            {
                Executions.Add(statement);
            }
        }
    }

    private sealed class Connection(StatementCountingDriver driver, ISqliteConnection inner) : ISqliteConnection
    {
        public bool InTransaction => inner.InTransaction;

        public long LastInsertRowId => inner.LastInsertRowId;

        public ISqliteStatement Prepare(SqlStatement statement) => new Counted(driver, inner.Prepare(statement));

        public void Execute(string sql) => inner.Execute(sql);

        public void ExecuteWithoutRetry(string sql) => inner.ExecuteWithoutRetry(sql);

        public string? QueryText(string sql) => inner.QueryText(sql);

        public SqliteCacheStats? ReadCacheStats() => inner.ReadCacheStats();

        public void Dispose() => inner.Dispose();
    }

    private sealed class Counted(StatementCountingDriver driver, ISqliteStatement inner) : ISqliteStatement
    {
        private bool _running;

        public SqlStatement Statement => inner.Statement;

        public void BindInt64(int index, long value) => inner.BindInt64(index, value);

        public void BindDouble(int index, double value) => inner.BindDouble(index, value);

        public void BindText(int index, string value) => inner.BindText(index, value);

        public void BindText(int index, ReadOnlySpan<byte> utf8) => inner.BindText(index, utf8);

        public void BindBlob(int index, ReadOnlySpan<byte> value) => inner.BindBlob(index, value);

        public void BindNull(int index) => inner.BindNull(index);

        public bool Step()
        {
            driver.Record(inner.Statement, !_running);
            _running = true;
            return inner.Step();
        }

        public long ColumnInt64(int column) => inner.ColumnInt64(column);

        public double ColumnDouble(int column) => inner.ColumnDouble(column);

        public bool ColumnIsNull(int column) => inner.ColumnIsNull(column);

        public string? ColumnText(int column) => inner.ColumnText(column);

        public int ColumnBlob(int column, Span<byte> destination) => inner.ColumnBlob(column, destination);

        public int ExecuteNonQuery()
        {
            driver.Record(inner.Statement, starts: true);
            return inner.ExecuteNonQuery();
        }

        public void Reset()
        {
            _running = false;
            inner.Reset();
        }

        public void Dispose() => inner.Dispose();
    }
}
