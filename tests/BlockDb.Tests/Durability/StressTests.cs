using System.Globalization;
using BlockDb.Opening;
using BlockDb.Stress;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// The stress suite (issue 10): four worker processes at a time, each with two <see cref="BlockDatabase"/> objects
/// (two key maps) running sessions with rollbacks, explicit and age commits and short busy timeouts, a shared
/// repository each, and a database disposed under running calls; a foreign SQL writer inserting (into gaps, above
/// the highest ID, or where SQLite picks), deleting, updating and replacing rows, and holding long reads; workers
/// SIGKILLed and restarted about every two seconds. Afterwards the file must check clean and every acknowledged
/// write must be there with its ID. <c>BLOCKDB_STRESS_SECONDS</c> sets the length of each run (default 12); the
/// soak is <c>dotnet run -c Release --project bench/BlockDb.Stress -- soak 600</c>.
/// </summary>
public sealed class StressTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    private static TimeSpan Duration => TimeSpan.FromSeconds(
        double.TryParse(Environment.GetEnvironmentVariable("BLOCKDB_STRESS_SECONDS"), NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds) ? seconds : 12);

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task No_duplicate_no_wrong_id_no_lost_acknowledged_write_no_hang_under_stress(string provider)
    {
        var report = await StressRun.RunAsync(new StressOptions(_folder.File(provider), [provider], Duration, Seed: 20261123), output.WriteLine);
        AssertCovered(report);
    }

    [Fact]
    public async Task The_same_with_all_providers_on_one_file_in_delete_journal_mode_where_commits_fail_with_busy()
    {
        var report = await StressRun.RunAsync(
            new StressOptions(_folder.File("delete"), [.. ProviderCatalog.SqliteNames], Duration, Journal: JournalMode.Delete, Seed: 20261124),
            output.WriteLine);
        AssertCovered(report);
    }

    private void AssertCovered(StressReport report)
    {
        if (report.Failures.Count > 0)
        {
            // The file and every process's output outlive the test's folder, for the diagnosis.
            var kept = Path.Combine(Path.GetTempPath(), "blockdb-stress-failures", DateTime.UtcNow.ToString("yyyyMMdd-HHmmss-fff", CultureInfo.InvariantCulture));
            Directory.CreateDirectory(kept);
            foreach (var file in Directory.GetFiles(_folder.Path, "*", SearchOption.AllDirectories))
            {
                File.Copy(file, Path.Combine(kept, Path.GetFileName(file)));
            }

            report.Failures.Insert(0, $"the file and the processes' output were kept in {kept}");
        }

        Assert.True(report.Failures.Count == 0, report.ToString());
        Assert.NotNull(report.Check);
        Assert.True(report.Check.IsClean, report.ToString());
        Assert.True(report.Kills >= 1, "no worker was killed: " + report);
        Assert.True(report.AckedBlocksets.Count > 100, "too little work was acknowledged: " + report);
        Assert.True(report.Counters.GetValueOrDefault("rollbacks") > 0, "no rollback ran: " + report);
        Assert.True(report.Counters.GetValueOrDefault("churned-databases") > 0, "no database was disposed under calls: " + report);
    }
}
