using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture;

/// <summary>
/// A connection opened as Duplicati opens its local database (facts §4.9, §9; <c>Duplicati/Library/SQLiteHelper/SQLiteLoader.cs</c>
/// 137-179, 286-313): Microsoft.Data.Sqlite, <c>Data Source=&lt;path&gt;;Pooling=false</c>, <c>PRAGMA busy_timeout=10000</c>,
/// then its custom pragmas in its order (<c>shared_cache</c>, which SQLite does not know and ignores, is left out).
/// </summary>
public static class DuplicatiConnection
{
    /// <summary>Duplicati's pragmas after <c>busy_timeout</c>, in its dictionary order.</summary>
    public static readonly IReadOnlyList<(string Name, string Value)> Pragmas =
    [
        ("synchronous", "NORMAL"),
        ("temp_store", "MEMORY"),
        ("journal_mode", "WAL"),
        ("cache_size", "-65536"),
        ("mmap_size", "67108864"),
        ("threads", "8"),
    ];

    /// <summary>Opens (creating if absent) a file with Duplicati's connection string and pragmas.</summary>
    /// <param name="path">The database file.</param>
    /// <returns>The open connection; the caller disposes it.</returns>
    public static SqliteConnection Open(string path)
    {
        var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false }.ToString());
        try
        {
            connection.Open();
            using var pragma = connection.CreateCommand();
            pragma.CommandText = "PRAGMA busy_timeout=10000";
            pragma.ExecuteNonQuery();
            foreach (var (name, value) in Pragmas)
            {
                pragma.CommandText = $"PRAGMA {name}={value}";
                pragma.ExecuteNonQuery();
            }

            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>Runs statements (an upgrade step, say) in one transaction of a connection opened as Duplicati opens the file, as its upgrader could.</summary>
    /// <param name="path">The database file.</param>
    /// <param name="statements">SQL statements, run in order, then committed.</param>
    public static void RunInTransaction(string path, IEnumerable<string> statements)
    {
        using var connection = Open(path);
        using var transaction = connection.BeginTransaction();
        foreach (var sql in statements)
        {
            using var command = connection.CreateCommand();
            command.Transaction = transaction;
            command.CommandText = sql;
            command.ExecuteNonQuery();
        }

        transaction.Commit();
    }
}

/// <summary>
/// Duplicati's <c>ReusableTransaction</c> (<c>Duplicati/Library/Main/Database/ReusableTransaction.cs</c>): a deferred
/// transaction begun at construction and always open; a commit begins the next one at once; dispose rolls back.
/// Every command must carry <see cref="Current"/>, which changes at every commit.
/// </summary>
public sealed class DuplicatiTransaction : IDisposable
{
    private readonly SqliteConnection _connection;
    private SqliteTransaction? _current;

    /// <summary>Begins the first deferred transaction on <paramref name="connection"/>.</summary>
    /// <param name="connection">An open connection with no transaction.</param>
    public DuplicatiTransaction(SqliteConnection connection)
    {
        _connection = connection ?? throw new ArgumentNullException(nameof(connection));
        _current = connection.BeginTransaction(deferred: true);
    }

    /// <summary>The open transaction: ask for it each time, it is replaced at every commit.</summary>
    public SqliteTransaction Current => _current ?? throw new ObjectDisposedException(nameof(DuplicatiTransaction));

    /// <summary>The connection.</summary>
    public SqliteConnection Connection => _connection;

    /// <summary>Commits so far.</summary>
    public long Commits { get; private set; }

    /// <summary>Called with the reason just before each commit, inside the transaction about to commit (a test reads what it holds).</summary>
    public Action<string>? Committing { get; set; }

    /// <summary>Called with the reason after each commit, once the next transaction has begun.</summary>
    public Action<string>? Committed { get; set; }

    /// <summary>Commits and begins the next deferred transaction (Duplicati's <c>CommitAsync(message, restart: true)</c>).</summary>
    /// <param name="reason">Duplicati's name for the commit point (given to <see cref="Committing"/> and <see cref="Committed"/>; not written anywhere).</param>
    public void Commit(string reason)
    {
        var current = Current;
        Committing?.Invoke(reason);
        current.Commit();
        current.Dispose();
        Commits++;
        _current = _connection.BeginTransaction(deferred: true);
        Committed?.Invoke(reason);
    }

    /// <summary>Rolls back the open transaction, as Duplicati's dispose does.</summary>
    public void Dispose()
    {
        if (_current is null)
        {
            return;
        }

        _current.Dispose();
        _current = null;
    }
}
