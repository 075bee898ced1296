using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace BlockDb.Tests.Configuration;

/// <summary>The provider and settings come from configuration alone: a JSON file, environment variables, the command line.</summary>
public sealed class ConfigurationTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void A_json_section_binds_every_setting()
    {
        var options = BlockDbConfiguration.Bind(Json($$"""
            {
              "BlockDb": {
                "Provider": "pinvoke",
                "DataSource": "{{_folder.File("a.db")}}",
                "SelectXorInsert": "InsertReturningThenSelect",
                "Pragmas": { "Preset": "SqliteDefaults", "JournalMode": "Wal", "CacheSize": -4096, "BusyTimeout": 500 },
                "Batching": { "CommitEvery": 0, "CommitAfterMilliseconds": 2000, "OnDispose": "Rollback" }
              }
            }
            """));

        Assert.Equal("pinvoke", options.Provider);
        Assert.Equal(SelectXorInsertStrategy.InsertReturningThenSelect, options.SelectXorInsert);
        Assert.Equal(PragmaSettings.SqliteDefaults with { JournalMode = JournalMode.Wal, CacheSize = -4096, BusyTimeout = 500 }, BlockDb.Sqlite.Pragmas.Resolve(options.Pragmas));
        Assert.Equal(0, options.Batching.CommitEvery);
        Assert.Equal(2000, options.Batching.CommitAfterMilliseconds);
        Assert.Equal(DisposeBehavior.Rollback, options.Batching.OnDispose);
    }

    [Fact]
    public void The_key_map_snapshot_binds_and_a_wrong_value_names_the_allowed_ones()
    {
        Assert.Equal(KeyMapFileMode.OnDispose, new BlockDbOptions().Index.KeyMapFile);
        var options = BlockDbConfiguration.Bind(Json($$"""{ "BlockDb": { "Provider": "PInvoke", "DataSource": "{{_folder.File("s.db")}}", "Index": { "KeyMapFile": "Off" } } }"""));
        Assert.Equal(KeyMapFileMode.Off, options.Index.KeyMapFile);

        var wrong = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json($$"""{ "BlockDb": { "Provider": "PInvoke", "DataSource": "{{_folder.File("s.db")}}", "Index": { "KeyMapFile": "Sometimes" } } }""")));
        Assert.Contains("OnDispose, Off", wrong.Message, StringComparison.Ordinal);
        var undefined = Assert.Throws<BlockDbConfigurationException>(() => new BlockDbOptions { Index = { KeyMapFile = (KeyMapFileMode)7 } }.Validate());
        Assert.Contains("BlockDb:Index:KeyMapFile", undefined.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Environment_variables_and_the_command_line_override_the_file_and_choose_the_provider()
    {
        const string variable = "BlockDb__Provider";
        Environment.SetEnvironmentVariable(variable, "SystemData");
        try
        {
            var file = _folder.File("appsettings.json");
            await File.WriteAllTextAsync(file, $$"""{ "BlockDb": { "Provider": "MicrosoftData", "DataSource": "{{_folder.File("b.db")}}" } }""");
            IConfiguration Build(params string[] args) => new ConfigurationBuilder()
                .AddJsonFile(file)
                .AddEnvironmentVariables()
                .AddCommandLine(args)
                .Build();

            Assert.Equal("SystemData", BlockDbConfiguration.Bind(Build()).Provider);
            var fromArgs = Build("--BlockDb:Provider=PInvoke", "--BlockDb:Pragmas:Synchronous=Full");
            Assert.Equal("PInvoke", BlockDbConfiguration.Bind(fromArgs).Provider);

            await using var services = new ServiceCollection().AddBlockDb(fromArgs).Services.BuildServiceProvider();
            var db = services.GetRequiredService<IBlockDatabase>();
            Assert.Same(services.GetRequiredService<IBlockDatabase>(), db);
            Assert.Equal("PInvoke", db.ProviderName);
            Assert.Equal(SynchronousMode.Full, ((ISqliteBlockDatabase)db).AppliedPragmas.Synchronous);
            await using var session = await db.OpenSessionAsync();
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 1))).Created);
        }
        finally
        {
            Environment.SetEnvironmentVariable(variable, null);
        }
    }

    [Fact]
    public void An_unknown_provider_fails_at_registration_listing_the_valid_names()
    {
        var config = Json($$"""{ "BlockDb": { "Provider": "Postgres", "DataSource": "{{_folder.File("c.db")}}" } }""");
        var e = Assert.Throws<BlockDbConfigurationException>(() => new ServiceCollection().AddBlockDb(config));
        Assert.Contains("'Postgres'", e.Message, StringComparison.Ordinal);
        Assert.Contains("MicrosoftData, SystemData, PInvoke", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_bad_pragma_value_names_the_setting_and_lists_the_allowed_values()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json($$"""
            { "BlockDb": { "DataSource": "{{_folder.File("d.db")}}", "Pragmas": { "JournalMode": "Fast" } } }
            """)));
        Assert.Equal("BlockDb:Pragmas:JournalMode", e.Setting);
        Assert.Contains("Delete, Truncate, Persist, Memory, Wal, Off", e.Message, StringComparison.Ordinal);

        var number = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json($$"""
            { "BlockDb": { "DataSource": "{{_folder.File("d.db")}}", "Pragmas": { "CacheSize": "lots" } } }
            """)));
        Assert.Equal("BlockDb:Pragmas:CacheSize", number.Setting);
        Assert.Contains("an integer", number.Message, StringComparison.Ordinal);

        var range = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json($$"""
            { "BlockDb": { "DataSource": "{{_folder.File("d.db")}}", "Pragmas": { "Threads": 1000 } } }
            """)));
        Assert.Equal("BlockDb:Pragmas:Threads", range.Setting);
        Assert.Contains("0 to 64", range.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_misspelt_setting_is_refused_rather_than_ignored()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json($$"""
            { "BlockDb": { "DataSource": "{{_folder.File("e.db")}}", "Pragmas": { "JournalMod": "Wal" } } }
            """)));
        Assert.Contains("'BlockDb:Pragmas:JournalMod'", e.Message, StringComparison.Ordinal);
        Assert.Equal("BlockDb:Pragmas", e.Setting);
        Assert.Contains("BlockDb:Pragmas:JournalMode", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_data_source_is_refused()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(Json("""{ "BlockDb": { "Provider": "PInvoke" } }""")));
        Assert.Equal("BlockDb:DataSource", e.Setting);
    }

    private static IConfiguration Json(string json) =>
        new ConfigurationBuilder().AddJsonStream(new MemoryStream(Encoding.UTF8.GetBytes(json))).Build();
}
