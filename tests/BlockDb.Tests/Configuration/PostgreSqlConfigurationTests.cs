using BlockDb.Opening;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;

namespace BlockDb.Tests.Configuration;

/// <summary>The PostgreSql provider by configuration: chosen by name, its settings applied, SQLite's refused by name (never ignored).</summary>
public sealed class PostgreSqlConfigurationTests
{
    private const string Somewhere = "Host=127.0.0.1;Port=1;Database=none;Username=none";

    public static TheoryData<string, Action<BlockDbOptions>> Refused() => new()
    {
        { "BlockDb:DataSource", o => o.DataSource = "index.db" },
        { "BlockDb:Pragmas:Preset", o => o.Pragmas.Preset = PragmaPreset.None },
        { "BlockDb:Pragmas:Synchronous", o => o.Pragmas.Synchronous = SynchronousMode.Full },
        { "BlockDb:Pragmas:BusyTimeout", o => o.Pragmas.BusyTimeout = 100 },
        { "BlockDb:Index:Layout", o => o.Index.Layout = BlockLayout.KeyMap },
        { "BlockDb:Index:Layout", o => o.Index.Layout = BlockLayout.TextHash },
        { "BlockDb:Index:KeyMapMemoryLimitMegabytes", o => o.Index.KeyMapMemoryLimitMegabytes = 10 },
        { "BlockDb:Batching:ReadsPerTransaction", o => o.Batching.ReadsPerTransaction = 64 },
        { "BlockDb:Batching:ReadTransactionMilliseconds", o => o.Batching.ReadTransactionMilliseconds = 10 },
        { "BlockDb:GroupCommit:MaxDelayMilliseconds", o => o.GroupCommit.MaxDelayMilliseconds = 10 },
        { "BlockDb:ConnectionString", o => o.ConnectionString = "Host=x;NoSuchKeyword=1" },
    };

    [Theory]
    [MemberData(nameof(Refused))]
    public void Settings_the_server_cannot_honour_are_refused_by_name_before_connecting(string setting, Action<BlockDbOptions> configure)
    {
        var options = new BlockDbOptions { Provider = "postgresql", ConnectionString = Somewhere }; // names are case-insensitive
        configure(options);
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDatabase.Open(options));
        Assert.Equal(setting, e.Setting);
    }

    [Fact]
    public void A_sqlite_provider_refuses_a_connection_string_and_the_server_needs_one()
    {
        var sqlite = Assert.Throws<BlockDbConfigurationException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = "PInvoke", DataSource = "x.db", ConnectionString = Somewhere }));
        Assert.Equal("BlockDb:ConnectionString", sqlite.Setting);
        var missing = Assert.Throws<BlockDbConfigurationException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql }));
        Assert.Equal("BlockDb:ConnectionString", missing.Setting);
    }

    [Fact]
    public void An_unreachable_server_gives_a_connection_sqlstate_not_a_sqlite_code()
    {
        var e = Assert.Throws<BlockDbException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = Somewhere + ";Timeout=2" }));
        Assert.StartsWith("08", e.SqlState, StringComparison.Ordinal);
        Assert.Null(e.SqliteErrorCode);
    }

    [PostgresFact]
    public async Task The_provider_is_chosen_by_configuration_alone_and_a_registered_data_source_is_used()
    {
        var connectionString = PostgreSqlServer.CreateSchema(out var schema);
        try
        {
            var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["BlockDb:Provider"] = "PostgreSql",
                ["BlockDb:ConnectionString"] = connectionString,
                ["BlockDb:Batching:CommitEvery"] = "1",
            }).Build();
            await using (var services = new ServiceCollection().AddBlockDb(configuration).Services.BuildServiceProvider())
            {
                var db = services.GetRequiredService<IBlockDatabase>();
                Assert.Equal("PostgreSQL", db.Engine);
                await using var session = await db.OpenSessionAsync();
                Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 1))).Created);
            }

            // No connection string: the NpgsqlDataSource the application registered, left to the application to dispose.
            await using var dataSource = NpgsqlDataSource.Create(connectionString);
            var collection = new ServiceCollection().AddSingleton(dataSource);
            collection.AddBlockDb(configure: o => o.Provider = ProviderCatalog.PostgreSql).AddPostgreSqlProvider();
            await using (var services = collection.BuildServiceProvider())
            {
                await using var session = await services.GetRequiredService<IBlockDatabase>().OpenSessionAsync();
                Assert.False((await session.SelectXorInsertAsync(TestData.Block(1, 1))).Created);
            }

            await using var stillOpen = await dataSource.OpenConnectionAsync();
        }
        finally
        {
            PostgreSqlServer.DropSchema(schema);
        }
    }
}
