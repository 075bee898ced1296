using System.Diagnostics;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Opening;

/// <summary>
/// Opening a file beside other connections: beside a writer holding the write lock (WAL or rollback journal, every
/// provider) an open takes no write lock and neither waits nor fails, and concurrent first opens of a new file all
/// succeed.
/// </summary>
public sealed class OpenBesideOthersTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    /// <summary>Opening a file (WAL or DELETE journal) while another connection holds the write lock: no wait, no BUSY.</summary>
    [Theory]
    [InlineData(PragmaPreset.Recommended)]
    [InlineData(PragmaPreset.SqliteDefaults)]
    public async Task Opening_beside_a_writer_takes_no_write_lock(PragmaPreset preset)
    {
        var path = Folder.File($"open-{preset}.db");
        await using (var db = Open($"open-{preset}.db", o => o.Pragmas.Preset = preset))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 5);
        }

        using var writer = new RawSql(path);
        writer.Execute("BEGIN IMMEDIATE");
        writer.InsertBlock(TestData.Hash(50), 10);
        await using (var db = Open($"open-{preset}.db", o => { o.Pragmas.Preset = preset; o.Pragmas.BusyTimeout = 0; }))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(3, await session.FindBlockAsync(TestData.Block(2, 10)));
            Assert.Null(await session.FindBlockAsync(TestData.Block(50, 10)));
            Assert.True((await db.CheckAsync()).IsClean);
        }

        writer.Execute("ROLLBACK");
    }

    // Defect 7: opening an existing file runs the schema check inside BEGIN IMMEDIATE, so Open fails with
    // SQLITE_BUSY whenever another connection holds the write lock, though it only needs to read.
    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Opening_a_file_does_not_need_the_write_lock(string provider)
    {
        var path = Folder.File("locked.db");
        await CreateBlocksAsync(path, 3);
        using var holder = RawOpen(path);
        holder.Execute("BEGIN IMMEDIATE");
        RawInsert(holder, null, TestData.Hash(99), 10);
        try
        {
            var (db, error) = Outcome(() => OpenWith(path, provider, o => o.Pragmas.BusyTimeout = 200));
            Assert.True(error is null, $"Open beside a writer failed: {error?.GetType().Name}: {error?.Message}");
            await using (db)
            await using (var session = await db!.OpenSessionAsync())
            {
                Assert.Equal(1, await session.FindBlockAsync(TestData.Block(1, 10)));
            }
        }
        finally
        {
            holder.Execute("ROLLBACK");
        }
    }

    // Defect 8: the first opens of a new file race on PRAGMA journal_mode = WAL: the connection that switches the
    // file cannot upgrade its read transaction while another opener is inside its BEGIN IMMEDIATE schema check, and
    // SQLite then returns SQLITE_BUSY at once instead of waiting for busy_timeout.
    [Fact]
    public async Task Concurrent_first_opens_of_a_new_file_all_succeed()
    {
        // Each round opens new files, each from 8 threads at once: one file per provider, plus three more with PInvoke,
        // the provider that surfaces the error (Microsoft.Data.Sqlite and System.Data.SQLite retry SQLITE_BUSY themselves
        // until their command timeout). At least 15 rounds, then more until a failure is seen or 10 s have passed.
        const int threads = 8;
        string[] providers = [.. ProviderCatalog.SqliteNames, "PInvoke", "PInvoke", "PInvoke"];
        var failures = new List<string>();
        var clock = Stopwatch.StartNew();
        var round = 0;
        for (; round < 15 || (failures.Count == 0 && clock.Elapsed < TimeSpan.FromSeconds(5)); round++)
        {
            var outcomes = await Task.WhenAll(providers.Select((provider, i) => OpenAtOnceAsync(Folder.File($"first-open-{round}-{i}.db"), provider, threads)));
            foreach (var (provider, errors) in providers.Zip(outcomes))
            {
                if (errors.Count > 0)
                {
                    Output.WriteLine($"round {round} ({provider}): {errors.Count} of {threads} opens failed; {errors[0].GetType().Name}: {errors[0].Message}");
                    failures.AddRange(errors.Select(e => $"round {round} ({provider}): {e.GetType().Name}: {e.Message}"));
                }
            }
        }

        var opens = round * providers.Length * threads;
        Output.WriteLine($"{round} rounds ({round * providers.Length} new files, {opens} opens) in {clock.Elapsed.TotalSeconds:F1} s; {failures.Count} opens failed");
        Assert.True(failures.Count == 0, $"{failures.Count} of {opens} concurrent first opens failed; first: {failures.FirstOrDefault()}");
    }

    /// <summary>Opens a new file from <paramref name="threads"/> threads released together; returns the failures.</summary>
    private static async Task<List<Exception>> OpenAtOnceAsync(string path, string provider, int threads)
    {
        using var barrier = new Barrier(threads);
        var outcomes = await Task.WhenAll(Enumerable.Range(0, threads).Select(_ => Task.Factory.StartNew(
            () =>
            {
                barrier.SignalAndWait();
                try
                {
                    using var db = OpenWith(path, provider);
                    return null;
                }
                catch (Exception e)
                {
                    return e;
                }
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default)));
        return [.. outcomes.OfType<Exception>()];
    }
}
