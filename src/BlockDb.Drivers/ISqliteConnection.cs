namespace BlockDb.Drivers;

/// <summary>
/// One open SQLite connection (one <c>sqlite3*</c> handle). Not thread-safe: one caller at a time.
/// Disposing it finalizes the statements it prepared and closes the handle, releasing the file.
/// </summary>
public interface ISqliteConnection : IDisposable
{
    /// <summary>Prepares a statement once, for reuse with new bindings on every execution.</summary>
    /// <param name="statement">The statement; its SQL text must hold exactly one SQL statement.</param>
    /// <returns>The prepared statement, owned by this connection.</returns>
    /// <exception cref="BlockDbException">SQLite could not prepare it (syntax, missing table, I/O).</exception>
    ISqliteStatement Prepare(SqlStatement statement);

    /// <summary>
    /// Runs SQL text that takes no parameters and whose result rows are discarded (schema DDL,
    /// <c>PRAGMA name = value</c>, <c>BEGIN</c>). Not for hot paths: the text is parsed every call.
    /// </summary>
    /// <param name="sql">SQL text built only from BlockDb's constants and validated typed values.</param>
    /// <exception cref="BlockDbException">SQLite failed; the exception keeps its result code.</exception>
    void Execute(string sql);

    /// <summary>
    /// Runs SQL text as <see cref="Execute"/> does, but gives up on a lock after the connection's <c>busy_timeout</c>
    /// alone: <c>SQLITE_BUSY</c> is thrown as soon as SQLite returns it, never retried by the provider on its own
    /// (Microsoft.Data.Sqlite and System.Data.SQLite retry for their whole command timeout, at least 1 s). BlockDb runs
    /// the key-map snapshot's <c>BEGIN IMMEDIATE</c> and <c>COMMIT</c> this way, so a dispose waits for another
    /// connection's lock no longer than the <c>busy_timeout</c> it set (0: not at all).
    /// </summary>
    /// <param name="sql">SQL text built only from BlockDb's constants and validated typed values.</param>
    /// <exception cref="BlockDbException">SQLite failed (<c>SQLITE_BUSY</c>, 5, when the lock stayed held); the exception keeps its result code.</exception>
    /// <remarks>The default runs <see cref="Execute"/>: right for a provider that does not retry <c>SQLITE_BUSY</c> itself; one that does overrides it.</remarks>
    void ExecuteWithoutRetry(string sql) => Execute(sql);

    /// <summary>Runs SQL text that returns one value and returns the first column of its first row as text, or <see langword="null"/> when there is no row or the value is NULL.</summary>
    /// <param name="sql">SQL text built only from BlockDb's constants and validated typed values.</param>
    /// <returns>The value as text.</returns>
    /// <exception cref="BlockDbException">SQLite failed; the exception keeps its result code.</exception>
    string? QueryText(string sql);

    /// <summary>
    /// The main database's file as SQLite opened it (what <c>sqlite3_db_filename</c> returns), or empty for an in-memory
    /// or temporary database. The default reads <c>pragma_database_list</c>.
    /// </summary>
    /// <exception cref="BlockDbException">SQLite failed; the exception keeps its result code.</exception>
    string FileName => QueryText("SELECT \"file\" FROM pragma_database_list WHERE \"name\" = 'main'") ?? string.Empty;

    /// <summary><see langword="true"/> while a transaction is open (<c>sqlite3_get_autocommit() == 0</c>).</summary>
    bool InTransaction { get; }

    /// <summary>
    /// The rowid of the last row a successful <c>INSERT</c> on this connection wrote, 0 when none has
    /// (<see href="https://www.sqlite.org/c3ref/last_insert_rowid.html">sqlite3_last_insert_rowid</see>): an insert's ID
    /// without a <c>RETURNING</c> clause, whose result table costs SQLite an ephemeral B-tree per run. The default runs
    /// <c>SELECT last_insert_rowid()</c>; a driver with the native handle calls the function.
    /// </summary>
    /// <exception cref="BlockDbException">SQLite failed; the exception keeps its result code.</exception>
    long LastInsertRowId => long.Parse(QueryText("SELECT last_insert_rowid()") ?? "0", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Reads the connection's page-cache counters (<c>sqlite3_db_status</c>), or <see langword="null"/> when the provider does not expose them.</summary>
    /// <returns>The counters since the connection opened, or <see langword="null"/>.</returns>
    SqliteCacheStats? ReadCacheStats();
}
