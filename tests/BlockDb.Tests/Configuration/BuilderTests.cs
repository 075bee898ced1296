using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.PInvoke;
using BlockDb.SystemData;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace BlockDb.Tests.Configuration;

/// <summary>
/// Building a database: the options are validated once and frozen, providers are chosen by name from those registered
/// (builder or service collection) or found by their package, and dependency injection supports <c>IOptions</c> with
/// <c>ValidateOnStart</c> and keyed registrations.
/// </summary>
public sealed class BuilderTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task Changing_the_options_after_build_changes_nothing_in_the_running_database()
    {
        var options = new BlockDbOptions { Provider = "PInvoke", DataSource = _folder.File("frozen.db"), Batching = { CommitEvery = 1 } };
        var builder = new BlockDatabaseBuilder(options);
        options.Batching.CommitEvery = 0; // after the builder copied them: not seen
        await using var db = builder.Build();
        builder.Options.Batching.CommitEvery = 0; // after the build: not seen either
        db.Options.Batching.CommitEvery = 0; // a copy: not seen either

        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        Assert.Equal(0, session.PendingWrites); // committed at once: CommitEvery is still 1
        Assert.Equal(1, db.Options.Batching.CommitEvery);
        Assert.Equal("PInvoke", db.Options.Provider);
        Assert.NotSame(db.Options, db.Options);
    }

    [Fact]
    public async Task UseSqliteDriver_chooses_the_driver_and_an_unset_provider_takes_the_documented_default()
    {
        await using (var chosen = new BlockDatabaseBuilder(new BlockDbOptions { Provider = "MicrosoftData", DataSource = _folder.File("use.db") }).UseSqliteDriver(PInvokeDriver.Instance).Build())
        {
            Assert.Equal("PInvoke", chosen.ProviderName);
            Assert.Equal("PInvoke", chosen.Options.Provider);
        }

        // The last choice wins: a provider named after the driver was chosen opens the named one.
        var builder = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("renamed.db") }).UseSqliteDriver(PInvokeDriver.Instance);
        builder.Options.Provider = "SystemData";
        await using (var renamed = builder.Build())
        {
            Assert.Equal("SystemData", renamed.ProviderName);
        }

        // Nothing chosen and nothing named: the documented default.
        await using var fallback = BlockDatabase.Open(new BlockDbOptions { DataSource = _folder.File("default.db") });
        Assert.Equal(ProviderCatalog.Default, fallback.ProviderName);
        Assert.Equal("SQLite", fallback.Engine);
        Assert.IsAssignableFrom<ISqliteBlockDatabase>(fallback);
    }

    [Fact]
    public void A_driver_without_a_name_is_refused_when_chosen()
    {
        var builder = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("nameless.db") });
        var e = Assert.Throws<ArgumentException>(() => builder.UseSqliteDriver(new RenamedDriver(PInvokeDriver.Instance, " ")));
        Assert.Equal("driver", e.ParamName);
        Assert.Null(builder.Options.Provider);
    }

    [Fact]
    public void A_SQLite_driver_is_reached_by_name_through_the_catalog_and_a_server_provider_is_not_one()
    {
        Assert.Equal(["MicrosoftData", "SystemData", "PInvoke"], ProviderCatalog.SqliteNames);
        Assert.Same(PInvokeDriver.Instance, ProviderCatalog.SqliteDriver("pinvoke"));
        Assert.Same(SystemDataDriver.Instance, ProviderCatalog.SqliteDriver(ProviderCatalog.SystemData));
        var server = Assert.Throws<BlockDbConfigurationException>(() => ProviderCatalog.SqliteDriver(ProviderCatalog.PostgreSql));
        Assert.Contains("not a SQLite provider; valid SQLite providers: MicrosoftData, SystemData, PInvoke", server.Message, StringComparison.Ordinal);
        var unknown = Assert.Throws<BlockDbConfigurationException>(() => ProviderCatalog.SqliteDriver("Sqlite3"));
        Assert.Equal("BlockDb:Provider", unknown.Setting);

        // The driver the catalog gives opens the same file the database did.
        var path = _folder.File("raw.db");
        BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PInvoke, DataSource = path }).Dispose();
        using var connection = ProviderCatalog.SqliteDriver(ProviderCatalog.PInvoke).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly));
        Assert.NotNull(connection);
    }

    [Fact]
    public void A_provider_whose_package_is_missing_is_a_configuration_error_naming_the_package()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() =>
            ProviderCatalog.Load(new ProviderCatalog.KnownProvider("Ghost", "BlockDb.Ghost.GhostDriver, BlockDb.Ghost", "BlockDb.Ghost", string.Empty)));
        Assert.Equal("BlockDb:Provider", e.Setting);
        Assert.Contains("'Ghost' is not installed", e.Message, StringComparison.Ordinal);
        Assert.Contains("BlockDb.Ghost package", e.Message, StringComparison.Ordinal);

        var wrongType = Assert.Throws<BlockDbConfigurationException>(() =>
            ProviderCatalog.Load(new ProviderCatalog.KnownProvider("Odd", typeof(BlockDbOptions).AssemblyQualifiedName!, "BlockDb.Odd", string.Empty)));
        Assert.Contains("no public static Instance", wrongType.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_registered_provider_is_chosen_through_dependency_injection_without_naming_it()
    {
        var services = new ServiceCollection();
        services.AddBlockDb(configure: o => o.DataSource = _folder.File("di.db")).AddPInvokeProvider();
        await using var provider = services.BuildServiceProvider();
        var db = provider.GetRequiredService<IBlockDatabase>();
        Assert.Equal("PInvoke", db.ProviderName);
        Assert.Same(db, provider.GetRequiredService<IBlockDatabase>());
    }

    [Fact]
    public async Task Keyed_registrations_give_two_indexes_in_one_application()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Backup:DataSource"] = _folder.File("backup.db"),
            ["Backup:Provider"] = "PInvoke",
            ["Archive:DataSource"] = _folder.File("archive.db"),
            ["Archive:Provider"] = "MicrosoftData",
            ["Archive:Index:Layout"] = "TextHash",
        }).Build();
        var services = new ServiceCollection();
        services.AddBlockDb(configuration.GetSection("Backup"), serviceKey: "backup");
        services.AddBlockDb(configuration.GetSection("Archive"), serviceKey: "archive");
        await using var provider = services.BuildServiceProvider();

        var backup = provider.GetRequiredKeyedService<IBlockDatabase>("backup");
        var archive = provider.GetRequiredKeyedService<IBlockDatabase>("archive");
        Assert.NotSame(backup, archive);
        Assert.Equal(("PInvoke", BlockLayout.KeyMap), (backup.ProviderName, backup.Layout));
        Assert.Equal(("MicrosoftData", BlockLayout.TextHash), (archive.ProviderName, archive.Layout));
        Assert.Equal(_folder.File("archive.db"), provider.GetRequiredService<IOptionsMonitor<BlockDbOptions>>().Get("archive").DataSource);

        await using var session = await backup.OpenSessionAsync();
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 1))).Created);
        await using var other = await archive.OpenSessionAsync();
        Assert.Null(await other.FindBlockAsync(TestData.Block(1, 1)));
    }

    [Fact]
    public async Task The_code_configuration_runs_after_the_bound_configuration_and_is_validated_with_it()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["BlockDb:Provider"] = "MicrosoftData",
            ["BlockDb:DataSource"] = _folder.File("configured.db"),
            ["BlockDb:Batching:CommitEvery"] = "7",
        }).Build();
        var services = new ServiceCollection();
        services.AddBlockDb(configuration, o =>
        {
            Assert.Equal(7, o.Batching.CommitEvery); // bound before the code runs
            o.Provider = "PInvoke";
            o.DataSource = _folder.File("coded.db");
        });
        await using (var provider = services.BuildServiceProvider())
        {
            var db = provider.GetRequiredService<IBlockDatabase>();
            Assert.Equal(("PInvoke", _folder.File("coded.db"), 7), (db.ProviderName, db.DataSource, db.Options.Batching.CommitEvery));
        }

        Assert.False(File.Exists(_folder.File("configured.db")));

        // A bad value set in code fails at registration, as a bad bound one does.
        var e = Assert.Throws<BlockDbConfigurationException>(() => new ServiceCollection().AddBlockDb(configuration, o => o.Batching.CommitEvery = -1));
        Assert.Equal("BlockDb:Batching:CommitEvery", e.Setting);

        // Keyed, from code only: the key's named options.
        var keyed = new ServiceCollection();
        keyed.AddBlockDb(configure: o => o.DataSource = _folder.File("keyed.db"), serviceKey: "k");
        await using var keyedProvider = keyed.BuildServiceProvider();
        Assert.Equal(_folder.File("keyed.db"), keyedProvider.GetRequiredKeyedService<IBlockDatabase>("k").DataSource);
        Assert.Null(keyedProvider.GetService<IBlockDatabase>());
    }

    [Fact]
    public void Options_changed_through_IOptions_are_validated_on_start_and_when_the_database_is_built()
    {
        var services = new ServiceCollection();
        services.AddBlockDb(configure: o => o.DataSource = _folder.File("validate.db"));
        services.Configure<BlockDbOptions>(o => o.Batching.CommitEvery = -5); // a later, bad configuration
        using var provider = services.BuildServiceProvider();

        var e = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IOptions<BlockDbOptions>>().Value);
        Assert.Contains("BlockDb:Batching:CommitEvery", e.Message, StringComparison.Ordinal);
        Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IBlockDatabase>());
        Assert.False(File.Exists(_folder.File("validate.db")));

        // ValidateOnStart registers the check for a host to run at start.
        Assert.Contains(services, d => d.ServiceType.Name.Contains("StartupValidator", StringComparison.Ordinal));
    }

    [Fact]
    public void A_database_is_built_from_a_custom_driver_registered_with_the_builder()
    {
        var driver = new CountingDriver(PInvokeDriver.Instance);
        using var db = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("custom.db") }).UseSqliteDriver(driver).Build();
        Assert.Equal("Counting", db.ProviderName);
        Assert.True(driver.Opened > 0);
    }

    /// <summary>A driver under another name over an existing driver.</summary>
    private sealed class RenamedDriver(ISqliteDriver inner, string name) : ISqliteDriver
    {
        public string Name => name;

        public string NativeLibraryVersion => inner.NativeLibraryVersion;

        public ISqliteConnection Open(SqliteOpenOptions options) => inner.Open(options);
    }

    /// <summary>A third-party driver: another name over an existing driver.</summary>
    private sealed class CountingDriver(ISqliteDriver inner) : ISqliteDriver
    {
        public int Opened { get; private set; }

        public string Name => "Counting";

        public string NativeLibraryVersion => inner.NativeLibraryVersion;

        public ISqliteConnection Open(SqliteOpenOptions options)
        {
            Opened++;
            return inner.Open(options);
        }
    }
}
