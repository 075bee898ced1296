using System.Data.SQLite;
using BlockDb.Drivers;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Providers;

/// <summary>
/// A connection opened by any SQLite provider starts from SQLite's own defaults and the file's state: no provider runs
/// pragmas of its own at open (System.Data.SQLite's connection-string keys can set synchronous, journal mode, foreign
/// keys, cache and page size, busy timeout), none pools the connection, and BlockDb's pragmas are then applied and read
/// back the same way on every provider.
/// </summary>
public sealed class ConnectionDefaultsTests(ITestOutputHelper output) : IDisposable
{
    private static readonly string[] Pragmas =
    [
        "journal_mode", "synchronous", "foreign_keys", "cache_size", "page_size", "busy_timeout", "recursive_triggers",
        "temp_store", "locking_mode", "query_only", "mmap_size", "automatic_index", "secure_delete", "cell_size_check",
        "legacy_alter_table", "trusted_schema",
    ];

    private readonly TempFolder _folder = new();

    public static TheoryData<string> SqliteProviders() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData("delete")]
    [InlineData("wal")]
    public void A_new_connection_starts_from_sqlites_defaults_and_the_files_state_on_every_provider(string journal)
    {
        var path = _folder.File(journal + ".db");
        using (var setup = ProviderCatalog.SqliteDriver(ProviderCatalog.PInvoke).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate)))
        {
            setup.Execute($"PRAGMA journal_mode = {journal}");
            setup.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        var seen = new Dictionary<string, string>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 5000));
            seen[provider] = string.Join(", ", Pragmas.Select(p => $"{p}={connection.QueryText($"PRAGMA {p}")}"));
            output.WriteLine($"{provider}: {seen[provider]}");
        }

        Assert.Single(seen.Values.Distinct());
        Assert.Contains($"journal_mode={journal}", seen[ProviderCatalog.SystemData], StringComparison.Ordinal);
        // SQLite's defaults (synchronous FULL, a 2,000 KiB cache, no busy timeout); foreign_keys is e_sqlite3's build
        // default (SQLITE_DEFAULT_FOREIGN_KEYS), the same for every provider.
        Assert.Contains("synchronous=2,", seen[ProviderCatalog.SystemData], StringComparison.Ordinal);
        Assert.Contains("cache_size=-2000,", seen[ProviderCatalog.SystemData], StringComparison.Ordinal);
        Assert.Contains("busy_timeout=0,", seen[ProviderCatalog.SystemData], StringComparison.Ordinal);
    }

    [Fact]
    public async Task BlockDbs_pragmas_are_applied_and_read_back_alike_on_every_provider()
    {
        var applied = new Dictionary<string, string>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            var path = _folder.File(provider + "-pragmas.db");
            await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path }))
            {
                applied[provider] = string.Join(", ", ((ISqliteBlockDatabase)db).AppliedPragmas);
            }

            // What the engine read back is what a fresh connection finds in the file (journal mode persists).
            using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
            Assert.Equal("wal", connection.QueryText("PRAGMA journal_mode"));
        }

        output.WriteLine(string.Join('\n', applied.Select(a => $"{a.Key}: {a.Value}")));
        Assert.Single(applied.Values.Distinct());
        Assert.Contains("journal_mode=WAL", applied[ProviderCatalog.SystemData], StringComparison.OrdinalIgnoreCase);
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public void A_disposed_connection_releases_the_file_at_once(string provider)
    {
        var path = _folder.File("pool.db");
        var driver = ProviderCatalog.SqliteDriver(provider);
        for (var i = 0; i < 3; i++)
        {
            using var connection = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate));
            connection.QueryText("SELECT COUNT(*) FROM sqlite_schema");
            Assert.Equal(1, ProcessFiles.Descriptors(path));
        }

        Assert.Equal(0, ProcessFiles.Descriptors(path));
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public void A_path_with_connection_string_syntax_in_it_opens_that_very_file(string provider)
    {
        var path = _folder.File("a;b=c 'd' \"e\";Pooling=True.db");
        using (var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate)))
        {
            connection.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        Assert.Equal([Path.GetFileName(path)], Directory.GetFiles(_folder.Path).Select(Path.GetFileName));
    }

    [Fact]
    public void An_applications_shared_flags_do_not_change_how_systemdata_binds_and_reads()
    {
        // Flags every System.Data.SQLite connection of the process takes unless it opts out: text instead of BLOBs and
        // integers would break BlockDb's hashes and IDs.
        var before = SQLiteConnection.SharedFlags;
        SQLiteConnection.SharedFlags = SQLiteConnectionFlags.BindAndGetAllAsText;
        try
        {
            using var connection = ProviderCatalog.SqliteDriver(ProviderCatalog.SystemData).Open(new SqliteOpenOptions(_folder.File("flags.db"), SqliteOpenMode.ReadWriteCreate));
            connection.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY, \"Hash\" BLOB NOT NULL)");
            using var insert = connection.Prepare(new SqlStatement("InsertItem", "INSERT INTO \"Item\" (\"ID\", \"Hash\") VALUES (@ID, @Hash) RETURNING \"ID\", \"Hash\", typeof(\"Hash\")", "@ID", "@Hash"));
            insert.BindInt64(1, 7);
            insert.BindBlob(2, [1, 2, 3]);
            Assert.True(insert.Step());
            Assert.Equal(7, insert.ColumnInt64(0));
            var hash = new byte[3];
            Assert.Equal(3, insert.ColumnBlob(1, hash));
            Assert.Equal(new byte[] { 1, 2, 3 }, hash);
            Assert.Equal("blob", insert.ColumnText(2));
            insert.Reset();
        }
        finally
        {
            SQLiteConnection.SharedFlags = before;
        }
    }
}
