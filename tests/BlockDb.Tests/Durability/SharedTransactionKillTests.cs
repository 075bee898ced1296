using System.Globalization;
using BlockDb.Duplicati.Fixture;
using BlockDb.Tests.Duplicati;
using Xunit.Abstractions;

namespace BlockDb.Tests.Durability;

/// <summary>
/// A process doing Duplicati's backup with BlockDb inside Duplicati's transaction (the engine's rows and BlockDb's
/// block rows in one transaction, committed at Duplicati's points) SIGKILLed mid-transaction: every row committed
/// before, of both sides, is there, none of the open transaction's is, Duplicati's rules find nothing and BlockDb opens
/// the file clean.
/// </summary>
public sealed class SharedTransactionKillTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task A_kill_mid_shared_transaction_keeps_every_committed_row_of_both_sides_and_none_of_the_open_one()
    {
        var template = _folder.File("template.sqlite");
        DuplicatiSchema.CreateFile(template);
        var empty = DuplicatiFiles.Column(template, DuplicatiWriters.Counts).Single();
        var random = new Random(24);
        var (killedMidway, rounds) = (0, 0);
        for (var round = 0; round < 8 || killedMidway < 4; round++)
        {
            Assert.True(round < 16, $"only {killedMidway} of {round} kills landed after a commit and before the end");
            var path = _folder.File(string.Create(CultureInfo.InvariantCulture, $"killed-{round}.sqlite"));
            File.Copy(template, path);
            using var child = new ChildProcess("dup-shared", path, "11", "120");
            await child.Ready.WaitAsync(TimeSpan.FromSeconds(60));
            await Task.Delay(random.Next(20, 1500));
            child.Kill();
            rounds++;

            var lines = child.Lines;
            Assert.DoesNotContain(lines, l => l.StartsWith("stderr:", StringComparison.Ordinal));
            var committing = lines.Where(l => l.StartsWith("COMMITTING ", StringComparison.Ordinal)).Select(l => l["COMMITTING ".Length..]).ToList();
            var committedCount = lines.Count(l => l == "COMMITTED");
            var done = lines.Contains("DONE");

            // The last commit printed COMMITTED, or the kill came between its COMMITTING and COMMITTED lines (then it
            // may or may not have reached the file): the file holds that transaction's rows, or the one's before.
            var lastCertain = committedCount == 0 ? empty : committing[committedCount - 1];
            var possible = committing.Count > committedCount ? new[] { lastCertain, committing[^1] } : [lastCertain];
            var found = DuplicatiFiles.Column(path, DuplicatiWriters.Counts).Single();
            output.WriteLine($"round {round}: {committedCount} commits, done {done}, rows {found}");
            Assert.Contains(found, possible);
            if (committedCount > 0 && !done)
            {
                killedMidway++;
            }

            if (committedCount > 0)
            {
                Assert.Equal("ok", DuplicatiFiles.Column(path, "PRAGMA integrity_check").Single());
                DuplicatiFiles.AssertConsistent(path);
                await DuplicatiSessions.AssertCleanAsync(path);
            }
        }

        output.WriteLine($"{rounds} rounds, {killedMidway} killed mid-backup");
    }
}
