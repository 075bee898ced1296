using BlockDb.Opening;
using BlockDb.PostgreSql;

namespace BlockDb.Tests.Opening;

/// <summary>
/// An engine provider from another assembly (BlockDb.PostgreSql) runs on BlockDb.Core's internal engine contract, so it
/// must be Core's own version: another version is refused with a configuration error naming both, before the provider
/// opens anything.
/// </summary>
public sealed class PackageVersionTests
{
    [Fact]
    public void An_engine_provider_of_another_version_is_refused_naming_both_versions()
    {
        // This test assembly is version 1.0.0; BlockDb.Core is the package version (0.x).
        // The builder is where AddBlockDb's registrations (AddPostgreSqlProvider's among them) end up.
        var provider = new OtherVersionProvider();
        var builder = new BlockDatabaseBuilder(new BlockDbOptions { Provider = OtherVersionProvider.ProviderName }).AddRegisteredProvider(provider);

        var error = Assert.Throws<BlockDbConfigurationException>(() => builder.Build());

        Assert.Equal("BlockDb:Provider", error.Setting);
        Assert.Contains($"BlockDb.Tests {PackageVersions.Of(typeof(PackageVersionTests).Assembly)} needs BlockDb.Core", error.Message, StringComparison.Ordinal);
        Assert.Contains($"found BlockDb.Core {PackageVersions.Core}", error.Message, StringComparison.Ordinal);
        Assert.False(provider.Opened);
    }

    [Fact]
    public void The_postgresql_provider_is_cores_own_version_and_loads_by_name()
    {
        Assert.Equal(PackageVersions.Core, PackageVersions.Of(typeof(PostgreSqlProvider).Assembly));
        PackageVersions.RequireSame(typeof(PostgreSqlProvider).Assembly);

        var found = ProviderCatalog.Find(ProviderCatalog.PostgreSql, []);

        Assert.Same(PostgreSqlProvider.Instance, found);
    }

    private sealed class OtherVersionProvider : IEngineProvider
    {
        public const string ProviderName = "OtherVersion";

        public bool Opened { get; private set; }

        public string Name => ProviderName;

        public void Validate(BlockDbOptions options)
        {
        }

        public IBlockDatabase Open(BlockDbProviderContext context)
        {
            Opened = true;
            throw new InvalidOperationException("A provider of another version was opened.");
        }
    }
}
