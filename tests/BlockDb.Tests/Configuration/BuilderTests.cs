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
    public async Task UseProvider_chooses_the_driver_and_an_unset_provider_takes_the_only_one_registered()
    {
        await using (var chosen = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("use.db") }).UseProvider(PInvokeDriver.Instance).Build())
        {
            Assert.Equal("PInvoke", chosen.ProviderName);
        }

        await using (var only = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("only.db") }).AddProvider(SystemDataDriver.Instance).Build())
        {
            Assert.Equal("SystemData", only.ProviderName);
        }

        // Nothing registered and nothing named: the documented default.
        await using var fallback = BlockDatabase.Open(new BlockDbOptions { DataSource = _folder.File("default.db") });
        Assert.Equal(BlockDbProviders.Default, fallback.ProviderName);
        Assert.Equal("SQLite", fallback.Engine);
        Assert.Equal(fallback.EngineVersion, fallback.SqliteVersion);
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
        services.AddBlockDb(o => o.DataSource = _folder.File("di.db")).AddPInvokeProvider();
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
        services.AddKeyedBlockDb("backup", configuration.GetSection("Backup"));
        services.AddKeyedBlockDb("archive", configuration.GetSection("Archive"));
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
    public void Options_changed_through_IOptions_are_validated_on_start_and_when_the_database_is_built()
    {
        var services = new ServiceCollection();
        services.AddBlockDb(o => o.DataSource = _folder.File("validate.db"));
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
        using var db = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _folder.File("custom.db") }).UseProvider(driver).Build();
        Assert.Equal("Counting", db.ProviderName);
        Assert.True(driver.Opened > 0);
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
