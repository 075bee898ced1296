using BlockDb.Opening;
using Npgsql;

namespace BlockDb.Tests.Conformance;

/// <summary>
/// The behaviour every provider must have with every block layout, on real SQLite files in temp folders. Each
/// test is a theory over <see cref="Matrix"/>, generated from the provider catalogue and the layout enum, so a new
/// provider or layout runs the whole suite with no new test code (the Dapper idea, without hand-picked subclasses).
/// The provider-independent behaviour runs over <see cref="ProviderMatrix"/>, which adds the PostgreSQL provider on a
/// real server (a fresh schema per test; <see cref="PostgreSqlServer"/>). The suite is split by theme into classes
/// (operations, faults, fuzz, shared session) so xUnit can run them side by side.
/// </summary>
public abstract class ConformanceTestBase : IDisposable
{
    private readonly TempFolder _folder = new();
    private string? _schema;
    private string? _connectionString;
    private string? _provider;
    private BlockLayout? _layout;

    /// <summary>Every provider × every block layout.</summary>
    public static TheoryData<string, BlockLayout> Matrix()
    {
        var data = new TheoryData<string, BlockLayout>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            foreach (var layout in LayoutCatalog.Created)
            {
                data.Add(provider, layout);
            }
        }

        return data;
    }

    /// <summary>
    /// <see cref="Matrix"/> plus the server providers (PostgreSQL, which stores <see cref="BlockLayout.BlobHash"/>), for
    /// the behaviour that does not depend on SQLite: its rows run when the test server answers, or always in CI.
    /// </summary>
    public static TheoryData<string, BlockLayout> ProviderMatrix()
    {
        var data = Matrix();
        if (PostgreSqlServer.Included)
        {
            data.Add(ProviderCatalog.PostgreSql, BlockLayout.BlobHash);
        }

        return data;
    }

    /// <summary>The matrix × every select-xor-insert strategy its layout runs (from the layout catalogue).</summary>
    public static IEnumerable<object[]> MatrixWithStrategies() => WithStrategies(Matrix());

    /// <summary><see cref="ProviderMatrix"/> × every select-xor-insert strategy its layout runs (PostgreSQL runs all three).</summary>
    public static IEnumerable<object[]> ProviderMatrixWithStrategies() => WithStrategies(ProviderMatrix());

    /// <summary><see cref="ProviderMatrix"/> × where the calls run: <c>"session"</c> (a session) or <c>"shared"</c> (the shared session).</summary>
    public static IEnumerable<object[]> ProviderMatrixWithSessionKinds() =>
        from pair in ProviderMatrix()
        from kind in new[] { "session", "shared" }
        select new object[] { pair[0], pair[1], kind };

    private static IEnumerable<object[]> WithStrategies(TheoryData<string, BlockLayout> matrix) =>
        from pair in matrix
        from strategy in LayoutCatalog.Of((BlockLayout)pair[1]).Strategies
        select new object[] { pair[0], pair[1], strategy };

    /// <summary>The matrix × every select-xor-insert strategy its layout refuses (from the layout catalogue).</summary>
    public static IEnumerable<object[]> MatrixWithRefusedStrategies() =>
        from pair in Matrix()
        from strategy in Enum.GetValues<SelectXorInsertStrategy>().Except(LayoutCatalog.Of((BlockLayout)pair[1]).Strategies)
        select new object[] { pair[0], pair[1], strategy };

    /// <summary>The provider matrix × hash texts that are not canonical padded base64.</summary>
    public static IEnumerable<object[]> MatrixWithBadHashes() => Cross(ProviderMatrix(),
    [
        ["", typeof(ArgumentException)],
        ["not base64 at all", typeof(ArgumentException)],
        ["abc", typeof(ArgumentException)],
        ["ab c", typeof(ArgumentException)],
        ["a===", typeof(ArgumentException)],
        ["====", typeof(ArgumentException)],
        ["AB==", typeof(ArgumentException)], // not canonical: decodes like "AA=="
        ["AAB=", typeof(ArgumentException)], // not canonical: decodes like "AAA="
    ]);

    /// <summary>The provider matrix × what disposing a session does with its batch, and the blocks left afterwards.</summary>
    public static IEnumerable<object[]> MatrixWithDisposeBehaviors() => Cross(ProviderMatrix(),
    [
        [DisposeBehavior.Commit, 3L],
        [DisposeBehavior.Rollback, 1L],
    ]);

    protected string Provider => _provider ?? throw new InvalidOperationException("Call Use(provider, layout) first.");

    protected BlockLayout Layout => _layout ?? throw new InvalidOperationException("Call Use(provider, layout) first.");

    protected string DbPath => _folder.File("index.db");

    protected TempFolder Folder => _folder;

    /// <summary>Whether this case runs on a database server (PostgreSQL) rather than a SQLite file.</summary>
    protected bool IsServer => Provider == ProviderCatalog.PostgreSql;

    /// <summary>This case's server database (a schema of its own), created on first use.</summary>
    protected string ConnectionString => _connectionString ??= PostgreSqlServer.CreateSchema(out _schema);

    public void Dispose()
    {
        _folder.Dispose();
        if (_schema is not null)
        {
            PostgreSqlServer.DropSchema(_schema);
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Asserts the engine's code for an insert of an existing block: SQLite's constraint code, or SQLSTATE 23505 with the SQLite codes null.</summary>
    protected void AssertUniqueViolation(BlockDbException e)
    {
        AssertEngineCode(e, "23505", SqliteResultCode.Constraint);
        Assert.Equal(IsServer ? null : SqliteResultCode.ConstraintUnique, e.SqliteExtendedErrorCode);
    }

    /// <summary>Whether <paramref name="e"/> carries the engine's code for an insert of an existing block.</summary>
    protected bool IsUniqueViolation(BlockDbException e) => IsServer ? e.SqlState == "23505" : e.SqliteErrorCode == SqliteResultCode.Constraint;

    /// <summary>Asserts the engine's code for a write refused on a read-only database: SQLITE_READONLY, or SQLSTATE 25006.</summary>
    protected void AssertReadOnlyCode(BlockDbException e) => AssertEngineCode(e, "25006", SqliteResultCode.ReadOnly);

    /// <summary>Sets SQLite's busy_timeout (ms) for the SQLite providers; a server has no pragmas (its lock waits are its own).</summary>
    protected void BusyTimeout(BlockDbOptions options, int milliseconds)
    {
        if (!IsServer)
        {
            options.Pragmas.BusyTimeout = milliseconds;
        }
    }

    /// <summary>Asserts SQLite's primary code, or on a server the SQLSTATE with the SQLite codes null (they say "not SQLite").</summary>
    private void AssertEngineCode(BlockDbException e, string sqlState, int sqliteCode)
    {
        Assert.Equal(IsServer ? sqlState : null, e.SqlState);
        Assert.Equal(IsServer ? null : sqliteCode, e.SqliteErrorCode);
    }

    /// <summary>Deletes the index (the file and its WAL, or the server schema's tables) so a new one can be created in its place.</summary>
    protected void DeleteIndex()
    {
        if (IsServer)
        {
            NpgsqlConnection.ClearAllPools();
            PostgreSqlServer.Execute(ConnectionString, """DROP TABLE "Block", "Blockset", "BlocksetEntry", "BlockDbSettings", "Remotevolume" """);
            return;
        }

        File.Delete(DbPath);
        File.Delete(DbPath + "-wal");
        File.Delete(DbPath + "-shm");
    }

    /// <summary>Sets the provider and layout of this test case (each case gets a fresh instance and folder).</summary>
    protected void Use(string provider, BlockLayout layout) => (_provider, _layout) = (provider, layout);

    protected BlockDbOptions Options(Action<BlockDbOptions>? configure = null)
    {
        var options = IsServer
            ? new BlockDbOptions { Provider = Provider, ConnectionString = ConnectionString, Index = { Layout = Layout } }
            : new BlockDbOptions { Provider = Provider, DataSource = DbPath, Index = { Layout = Layout } };
        configure?.Invoke(options);
        return options;
    }

    protected IBlockDatabase Open(Action<BlockDbOptions>? configure = null) => BlockDatabase.Open(Options(configure));

    private static IEnumerable<object[]> Cross(TheoryData<string, BlockLayout> matrix, IEnumerable<object[]> extras)
    {
        var rows = extras.ToList();
        foreach (var pair in matrix)
        {
            foreach (var extra in rows)
            {
                yield return [.. pair, .. extra];
            }
        }
    }
}
