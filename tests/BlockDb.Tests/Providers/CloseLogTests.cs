using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Providers;

/// <summary>
/// What a provider runs when a connection closes, seen in SQLite's own error log (https://www.sqlite.org/errlog.html),
/// which the stress program installs before any connection opens. The Mono port of System.Data.SQLite ran
/// <c>ROLLBACK</c> on every close, so SQLite logged "cannot rollback - no transaction is active" for each one; and
/// System.Data.SQLite 2.x installs its own log callback at its first connection, which would replace the application's.
/// </summary>
public sealed class CloseLogTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> SqliteProviders() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task Closing_connections_logs_nothing_and_sqlites_log_stays_the_applications(string provider)
    {
        var (exit, stdout, stderr) = await StressProgram.RunAsync(StressProgram.Assembly, ["closelog", _folder.File("close.db"), provider]);
        output.WriteLine(stdout + stderr);

        Assert.Equal(0, exit);
        Assert.Contains("CLOSELOG done", stdout, StringComparison.Ordinal);
        var log = stdout.Split('\n').Where(l => l.StartsWith("SQLITELOG ", StringComparison.Ordinal)).ToList();

        // The one statement that failed on purpose, seen by the application's callback: the log is still its own.
        Assert.Single(log, l => l.Contains("no such table: NoSuchTable", StringComparison.Ordinal));
        Assert.Single(log);
    }
}
