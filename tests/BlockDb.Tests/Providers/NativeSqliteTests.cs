using BlockDb.Drivers;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Providers;

/// <summary>
/// Every SQLite provider runs the one native <c>e_sqlite3</c> library that <c>SQLitePCLRaw.bundle_e_sqlite3</c> ships,
/// and a machine where it cannot be loaded gets a <see cref="BlockDbConfigurationException"/> that says which provider,
/// which library and which package, whichever provider is configured.
/// </summary>
public sealed class NativeSqliteTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> SqliteProviders() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Every_provider_reports_the_same_sqlite_version_and_source_id()
    {
        var reported = new Dictionary<string, (string? Version, string? SourceId)>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            var driver = ProviderCatalog.SqliteDriver(provider);
            using var connection = driver.Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate));
            reported[provider] = (connection.QueryText("SELECT sqlite_version()"), connection.QueryText("SELECT sqlite_source_id()"));
            Assert.Equal(driver.NativeLibraryVersion, reported[provider].Version);
            output.WriteLine($"{provider}: {reported[provider].Version} {reported[provider].SourceId}");
        }

        Assert.Single(reported.Values.Distinct());
        Assert.Matches(@"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [0-9a-f]{40,}", reported.Values.First().SourceId);
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task A_machine_without_the_native_library_gets_a_configuration_error_naming_provider_library_and_package(string provider)
    {
        // The stress program's build without runtimes/ (where libe_sqlite3.so lives): what an application deployed
        // without its native assets sees.
        var copy = Directory.CreateDirectory(_folder.File("no-native")).FullName;
        foreach (var file in Directory.EnumerateFiles(Path.GetDirectoryName(StressProgram.Assembly)!))
        {
            File.Copy(file, Path.Combine(copy, Path.GetFileName(file)));
        }

        Assert.False(Directory.Exists(Path.Combine(copy, "runtimes")));
        var db = _folder.File("index.db");
        var (exit, stdout, stderr) = await StressProgram.RunAsync(Path.Combine(copy, Path.GetFileName(StressProgram.Assembly)), ["tryopen", db, provider]);
        output.WriteLine(stdout + stderr);

        Assert.Equal(0, exit);
        var errors = stdout.Split('\n').Where(l => l.StartsWith("ERROR ", StringComparison.Ordinal)).ToList();
        Assert.Equal(2, errors.Count); // opening an index, and asking the driver for its native version
        foreach (var error in errors)
        {
            Assert.StartsWith($"ERROR {typeof(BlockDbConfigurationException).FullName}: ", error, StringComparison.Ordinal);
            Assert.Contains($"'{provider}'", error, StringComparison.Ordinal);
            Assert.Contains(SqliteNativeLibrary.FileName, error, StringComparison.Ordinal);
            Assert.Contains(SqliteNativeLibrary.Package, error, StringComparison.Ordinal);
        }

        Assert.False(File.Exists(db));
    }
}
