using System.Data.Common;
using System.Globalization;
using System.Text;

namespace BlockDb.Drivers.AdoNet;

/// <summary>
/// The part of a driver that is the same for every ADO.NET SQLite provider (Microsoft.Data.Sqlite,
/// System.Data.SQLite): one <see cref="DbCommand"/> per prepared statement, its parameters created once and
/// reused. A provider subclass supplies only how to read the transaction state and how to turn the
/// provider's exception into a <see cref="BlockDbException"/> with SQLite's result codes.
/// </summary>
public abstract class AdoNetSqliteConnection : ISqliteConnection
{
    private readonly List<AdoNetSqliteStatement> _statements = [];
    private bool _disposed;

    /// <summary>Wraps an open provider connection; this object then owns it.</summary>
    /// <param name="connection">An open connection.</param>
    protected AdoNetSqliteConnection(DbConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        Connection = connection;
    }

    /// <summary>
    /// Opens a provider connection and wraps it; when opening fails the connection is disposed and the provider's
    /// exception is turned into a <see cref="BlockDbException"/> by <paramref name="translate"/>.
    /// </summary>
    /// <typeparam name="TConnection">The provider's connection type.</typeparam>
    /// <typeparam name="TWrapper">The driver's connection type.</typeparam>
    /// <param name="connection">The provider connection, not yet open.</param>
    /// <param name="wrap">Wraps the open connection.</param>
    /// <param name="translate">Turns the provider's open failure into a <see cref="BlockDbException"/>, or returns <see langword="null"/> to let it propagate.</param>
    /// <param name="path">The database file, for the message.</param>
    /// <returns>The wrapped open connection.</returns>
    /// <exception cref="BlockDbException">The provider failed to open the file.</exception>
    protected static TWrapper OpenAndWrap<TConnection, TWrapper>(TConnection connection, Func<TConnection, TWrapper> wrap, Func<Exception, string, BlockDbException?> translate, string path)
        where TConnection : DbConnection
        where TWrapper : AdoNetSqliteConnection
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(wrap);
        ArgumentNullException.ThrowIfNull(translate);
        try
        {
            connection.Open();
            return wrap(connection);
        }
        catch (Exception e)
        {
            connection.Dispose();
            if (translate(e, $"opening {Quoted.Path(path)}") is { } translated)
            {
                throw translated;
            }

            throw;
        }
    }

    /// <summary>The provider's connection.</summary>
    protected DbConnection Connection { get; }

    /// <inheritdoc />
    public abstract bool InTransaction { get; }

    /// <inheritdoc />
    public virtual long LastInsertRowId => long.Parse(QueryText("SELECT last_insert_rowid()") ?? "0", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>
    /// Turns a provider exception into a <see cref="BlockDbException"/> that keeps SQLite's result codes,
    /// or returns <see langword="null"/> when <paramref name="exception"/> did not come from SQLite.
    /// </summary>
    /// <param name="exception">The provider's exception.</param>
    /// <param name="what">What was running, for the message (a statement name or SQL text).</param>
    /// <returns>The translated exception, or <see langword="null"/> to let the original propagate.</returns>
    protected internal abstract BlockDbException? Translate(Exception exception, string what);

    /// <inheritdoc />
    public ISqliteStatement Prepare(SqlStatement statement)
    {
        ArgumentNullException.ThrowIfNull(statement);
        ObjectDisposedException.ThrowIf(_disposed, this);
        var command = Connection.CreateCommand();
        try
        {
            command.CommandText = statement.Text;
            var parameters = new DbParameter[statement.Parameters.Count];
            for (var i = 0; i < parameters.Length; i++)
            {
                parameters[i] = command.CreateParameter();
                parameters[i].ParameterName = statement.Parameters[i];
                parameters[i].Value = DBNull.Value;
                command.Parameters.Add(parameters[i]);
            }

            command.Prepare();
            var prepared = new AdoNetSqliteStatement(this, statement, command, parameters);
            _statements.Add(prepared);
            return prepared;
        }
        catch (Exception e) when (Translate(e, statement.Name) is { } translated)
        {
            command.Dispose();
            throw translated;
        }
        catch
        {
            command.Dispose();
            throw;
        }
    }

    /// <inheritdoc />
    public void Execute(string sql)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sql);
        ObjectDisposedException.ThrowIf(_disposed, this);
        using var command = Connection.CreateCommand();
        command.CommandText = sql;
        try
        {
            command.ExecuteNonQuery();
        }
        catch (Exception e) when (Translate(e, sql) is { } translated)
        {
            throw translated;
        }
    }

    /// <summary>
    /// Runs SQL text without the provider's own retries of <c>SQLITE_BUSY</c> (see
    /// <see cref="ISqliteConnection.ExecuteWithoutRetry"/>). The default runs <see cref="Execute"/>, which retries until
    /// the provider's command timeout: a provider that can reach its native handle overrides it with one
    /// <c>sqlite3_exec</c>.
    /// </summary>
    /// <param name="sql">SQL text built only from BlockDb's constants and validated typed values.</param>
    /// <exception cref="BlockDbException">SQLite failed; the exception keeps its result code.</exception>
    public virtual void ExecuteWithoutRetry(string sql) => Execute(sql);

    /// <summary>Throws <see cref="ObjectDisposedException"/> once the connection is disposed (for a subclass's own calls on the native handle).</summary>
    /// <exception cref="ObjectDisposedException">The connection is disposed.</exception>
    protected void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);

    /// <inheritdoc />
    public string? QueryText(string sql)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sql);
        ObjectDisposedException.ThrowIf(_disposed, this);
        using var command = Connection.CreateCommand();
        command.CommandText = sql;
        try
        {
            var value = command.ExecuteScalar();
            return value is null or DBNull ? null : Convert.ToString(value, CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (Translate(e, sql) is { } translated)
        {
            throw translated;
        }
    }

    /// <summary>
    /// Reads a non-NULL BLOB column of the current row into <paramref name="destination"/> and returns its full length
    /// in bytes. The default reads it with one <see cref="DbDataReader.GetBytes"/> into a reused buffer (asking for the
    /// length only when the value fills the buffer): the cheapest way on System.Data.SQLite's design; a provider whose
    /// <c>GetBytes</c> is slow overrides it. An integer or a text (which System.Data.SQLite's <c>GetBytes</c> refuses
    /// with <see cref="InvalidCastException"/>) reads as its decimal text or its UTF-8, as SQLite's own <c>sqlite3_column_blob</c> gives
    /// it (<see href="https://www.sqlite.org/c3ref/column_blob.html"/>); a real number is refused with a
    /// <see cref="BlockDbException"/>.
    /// </summary>
    /// <param name="reader">The reader, on a row.</param>
    /// <param name="column">The 0-based column.</param>
    /// <param name="destination">Receives the first <c>min(length, destination.Length)</c> bytes.</param>
    /// <param name="scratch">A buffer the statement keeps between calls (grown here when needed).</param>
    /// <returns>The value's length in bytes.</returns>
    protected internal virtual int ReadBlob(DbDataReader reader, int column, Span<byte> destination, ref byte[]? scratch)
    {
        ArgumentNullException.ThrowIfNull(reader);
        scratch ??= new byte[Math.Max(256, destination.Length)];
        int read;
        try
        {
            read = (int)reader.GetBytes(column, 0, scratch, 0, scratch.Length);
        }
        catch (InvalidCastException e)
        {
            return AsSqliteBytes(reader.GetValue(column), destination, e);
        }

        if (read == scratch.Length)
        {
            var length = checked((int)reader.GetBytes(column, 0, null, 0, 0));
            if (length > scratch.Length)
            {
                scratch = new byte[length];
                read = (int)reader.GetBytes(column, 0, scratch, 0, length);
            }
        }

        scratch.AsSpan(0, Math.Min(read, destination.Length)).CopyTo(destination);
        return read;
    }

    /// <summary>
    /// A value the provider refuses to read as bytes, read as SQLite gives it: the bytes the provider's value gives
    /// (System.Data.SQLite returns a BLOB column's integer as SQLite's bytes of it), a text's UTF-8, an integer's decimal
    /// text; a real number is refused (its text is SQLite's own formatting).
    /// </summary>
    private static int AsSqliteBytes(object value, Span<byte> destination, InvalidCastException e)
    {
        if (value is byte[] or string)
        {
            var bytes = value as byte[] ?? Encoding.UTF8.GetBytes((string)value);
            bytes.AsSpan(0, Math.Min(bytes.Length, destination.Length)).CopyTo(destination);
            return bytes.Length;
        }

        if (value is not long integer)
        {
            throw new BlockDbException($"A column read as bytes holds the {value.GetType().Name} {Convert.ToString(value, CultureInfo.InvariantCulture)}, which this provider cannot read as bytes; BlockDb stores hashes as BLOB or TEXT.", e);
        }

        Span<byte> text = stackalloc byte[20];
        integer.TryFormat(text, out var length, default, CultureInfo.InvariantCulture);
        text[..Math.Min(length, destination.Length)].CopyTo(destination);
        return length;
    }

    /// <summary>
    /// Called after <paramref name="command"/> failed while running (its exception already translated), so the provider
    /// can leave the statement reset and ready to be bound again. The default does nothing: Microsoft.Data.Sqlite resets
    /// a failed statement itself; System.Data.SQLite leaves it stepped, and SQLite refuses to bind a stepped statement
    /// (<c>SQLITE_MISUSE</c>, <see href="https://www.sqlite.org/c3ref/bind_blob.html"/>).
    /// </summary>
    /// <param name="command">The prepared command whose execution failed.</param>
    protected internal virtual void ResetAfterFailure(DbCommand command)
    {
    }

    /// <summary>The page-cache counters; <see langword="null"/> unless the provider exposes its <c>sqlite3*</c> handle (override).</summary>
    /// <returns>The counters, or <see langword="null"/>.</returns>
    public virtual SqliteCacheStats? ReadCacheStats() => null;

    /// <summary>Disposes the prepared statements, then closes the provider connection.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        foreach (var statement in _statements)
        {
            statement.Dispose();
        }

        _statements.Clear();
        Connection.Dispose();
        GC.SuppressFinalize(this);
    }
}
