namespace BlockDb.Drivers;

/// <summary>
/// A prepared statement (<c>sqlite3_stmt*</c>), reused for every execution. Parameter indexes are 1-based
/// and follow <see cref="SqlStatement.Parameters"/>; column indexes are 0-based.
/// </summary>
/// <remarks>
/// One execution is: bind, then <see cref="Step"/> until it returns <see langword="false"/> (or stop early),
/// then <see cref="Reset"/>. A driver copies bound text and BLOBs before the bind returns (the caller's string or
/// span need not outlive the call) and keeps every binding across <see cref="Reset"/> until it is bound again.
/// Every method throws <see cref="BlockDbException"/> with SQLite's result code when SQLite fails.
/// </remarks>
public interface ISqliteStatement : IDisposable
{
    /// <summary>The statement this was prepared from.</summary>
    SqlStatement Statement { get; }

    /// <summary>Binds a 64-bit integer to parameter <paramref name="index"/> (1-based).</summary>
    /// <param name="index">The 1-based parameter index.</param>
    /// <param name="value">The value.</param>
    void BindInt64(int index, long value);

    /// <summary>Binds a 64-bit IEEE float (SQLite's REAL) to parameter <paramref name="index"/> (1-based).</summary>
    /// <param name="index">The 1-based parameter index.</param>
    /// <param name="value">The value.</param>
    void BindDouble(int index, double value);

    /// <summary>Binds UTF-8 text to parameter <paramref name="index"/> (1-based).</summary>
    /// <param name="index">The 1-based parameter index.</param>
    /// <param name="value">The text; never <see langword="null"/> (use <see cref="BindNull"/>).</param>
    void BindText(int index, string value);

    /// <summary>
    /// Binds text given as its UTF-8 bytes to parameter <paramref name="index"/> (1-based), with no string in between;
    /// the bytes are copied before this returns.
    /// </summary>
    /// <param name="index">The 1-based parameter index.</param>
    /// <param name="utf8">The text's UTF-8 bytes (a zero-length span binds empty text, not NULL).</param>
    /// <exception cref="ArgumentException"><paramref name="utf8"/> is not valid UTF-8.</exception>
    void BindText(int index, ReadOnlySpan<byte> utf8);

    /// <summary>Binds a BLOB to parameter <paramref name="index"/> (1-based). The bytes are copied before this returns.</summary>
    /// <param name="index">The 1-based parameter index.</param>
    /// <param name="value">The bytes (a zero-length span binds an empty BLOB, not NULL).</param>
    void BindBlob(int index, ReadOnlySpan<byte> value);

    /// <summary>Binds SQL NULL to parameter <paramref name="index"/> (1-based).</summary>
    /// <param name="index">The 1-based parameter index.</param>
    void BindNull(int index);

    /// <summary>Advances the execution by one row (<c>sqlite3_step</c>), starting it on the first call after a reset.</summary>
    /// <returns><see langword="true"/> when a result row is available; <see langword="false"/> when the statement is done.</returns>
    bool Step();

    /// <summary>Reads column <paramref name="column"/> (0-based) of the current row as a 64-bit integer.</summary>
    /// <param name="column">The 0-based column index.</param>
    /// <returns>The value.</returns>
    long ColumnInt64(int column);

    /// <summary>Reads column <paramref name="column"/> (0-based) of the current row as a 64-bit IEEE float (SQLite's REAL).</summary>
    /// <param name="column">The 0-based column index.</param>
    /// <returns>The value.</returns>
    double ColumnDouble(int column);

    /// <summary>Whether column <paramref name="column"/> (0-based) of the current row is SQL NULL.</summary>
    /// <param name="column">The 0-based column index.</param>
    /// <returns><see langword="true"/> for NULL.</returns>
    bool ColumnIsNull(int column);

    /// <summary>Reads column <paramref name="column"/> (0-based) of the current row as text, or <see langword="null"/> for SQL NULL.</summary>
    /// <param name="column">The 0-based column index.</param>
    /// <returns>The value.</returns>
    string? ColumnText(int column);

    /// <summary>
    /// Reads column <paramref name="column"/> (0-based) of the current row as a BLOB into <paramref name="destination"/>;
    /// a TEXT value is read as its UTF-8 bytes, as <c>sqlite3_column_blob</c> gives them
    /// (<see href="https://www.sqlite.org/c3ref/column_blob.html"/>).
    /// </summary>
    /// <param name="column">The 0-based column index.</param>
    /// <param name="destination">Receives the first <c>min(length, destination.Length)</c> bytes.</param>
    /// <returns>The value's full length in bytes, or -1 for SQL NULL.</returns>
    int ColumnBlob(int column, Span<byte> destination);

    /// <summary>Runs the statement to completion, resets it, and returns the rows it changed (<c>sqlite3_changes()</c>).</summary>
    /// <returns>The number of rows inserted, updated or deleted.</returns>
    int ExecuteNonQuery();

    /// <summary>Ends the current execution so the statement can run again (<c>sqlite3_reset</c>). Bindings are kept.</summary>
    void Reset();
}
