using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Import;

/// <summary>
/// A bulk import into a KeyMap file lifts the per-row insert guard only inside its own write transaction
/// (docs/ARCHITECTURE.md, M6): other connections never see the file without it and cannot write while it is lifted,
/// every commit restores it with its exact text, a failure rolls the lift back with the rows, the guard still flags a
/// foreign insert afterwards, and the database's own key map takes the import's schema change as its own (no reload).
/// </summary>
public sealed class KeyMapImportGuardTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    /// <summary>Blocks per import transaction: more than the 1,024 blocks the import hands its session at a time, so the middle of a transaction has written rows.</summary>
    private const int PerTransaction = 2500;

    /// <summary>Where the input pauses (or fails): inside the second transaction, after its first 1,024 blocks were written.</summary>
    private const int Midway = PerTransaction + 1500;

    private const string GuardInsertSql = """SELECT "sql" FROM sqlite_schema WHERE type = 'trigger' AND name = 'BlockDbGuardInsert'""";

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task An_import_lifts_the_insert_guard_only_inside_its_transaction_and_restores_it_before_each_commit(string provider)
    {
        var path = Folder.File("lift.db");
        var log = new CapturingLoggerFactory();
        await using var db = Build(path, provider, log);
        await using var session = await db.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1_000_000, 10));
        await session.CommitAsync();
        Assert.Null(await session.FindBlockAsync(TestData.Block(2_000_000, 10))); // loads the map: one whole-table load
        Assert.Equal(1, Loads(log));

        using var raw = new RawSql(path, provider, busyTimeoutMilliseconds: 0);
        var guard = raw.Text(GuardInsertSql);
        Assert.NotNull(guard);
        var seenMidTransaction = new List<(string? Guard, bool ForeignWriteRefused)>();
        var result = await db.ImportBlocksAsync(
            Blocks(3 * PerTransaction, at: Midway, () => seenMidTransaction.Add((raw.Text(GuardInsertSql), ForeignInsertRefused(raw)))),
            new ImportOptions { ItemsPerTransaction = PerTransaction });
        Assert.Equal((3L * PerTransaction, 3), (result.Created, result.Transactions));

        // Mid-transaction, another connection sees the committed schema (the guard) and cannot write at all.
        Assert.Equal([(guard, true)], seenMidTransaction);

        // After it: the guard is back with its exact text, the file checks clean, and the database's key map took the
        // import's guard DDL as its own: a miss catches up above the import's rows without reading the whole table.
        Assert.Equal(guard, raw.Text(GuardInsertSql));
        Assert.True((await db.CheckAsync()).IsClean);
        Assert.Null(await session.FindBlockAsync(TestData.Block(2_000_001, 10)));
        Assert.Equal(1, Loads(log));
        Assert.Equal(3L * PerTransaction + 1, (await session.GetCountsAsync()).Blocks);

        // The restored guard flags a foreign insert below the high-water mark (F3).
        var before = State(raw);
        Assert.Equal(3L * PerTransaction + 1, before.MaxBlockId);
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 3""");
        raw.InsertBlock(TestData.Hash(3_000_001), 10, id: 3);
        Assert.Equal(before.Generation + 1, State(raw).Generation);
        await session.CommitAsync(); // ends the session's read transaction: the next read sees the foreign write
        Assert.Equal(3, await session.FindBlockAsync(TestData.Block(3_000_001, 10)));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task An_import_failing_mid_transaction_rolls_back_its_guard_lift_with_its_rows(string provider)
    {
        var path = Folder.File("fail.db");
        await using var db = Build(path, provider, new CapturingLoggerFactory());
        using var raw = new RawSql(path, provider);
        var guard = raw.Text(GuardInsertSql);
        var failure = await Assert.ThrowsAsync<IOException>(async () =>
            await db.ImportBlocksAsync(Blocks(3 * PerTransaction, at: Midway, () => throw new IOException("the input failed")), new ImportOptions { ItemsPerTransaction = PerTransaction }));
        Assert.Equal("the input failed", failure.Message);

        Assert.Equal(guard, raw.Text(GuardInsertSql));
        Assert.Equal(PerTransaction, raw.Scalar("""SELECT COUNT(*) FROM "Block" """)); // the first transaction only
        Assert.True((await db.CheckAsync()).IsClean);
        var before = State(raw);
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 7""");
        raw.InsertBlock(TestData.Hash(3_000_000), 10, id: 7);
        Assert.Equal(before.Generation + 1, State(raw).Generation); // re-inserted below the mark: flagged (F3)
    }

    private static int Loads(CapturingLoggerFactory log) => log.Count(10, "KeyMapLoaded");

    /// <summary>Whether a plain insert from another connection is refused (the import holds the write lock).</summary>
    private static bool ForeignInsertRefused(RawSql raw)
    {
        try
        {
            raw.InsertBlock(TestData.Hash(4_000_000), 10, id: 4_000_000);
            return false;
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
        {
            return true;
        }
    }

    /// <summary>Import blocks 0 … <paramref name="count"/> − 1, running <paramref name="midway"/> before block <paramref name="at"/>.</summary>
    private static async IAsyncEnumerable<ImportBlock> Blocks(int count, int at, Action midway)
    {
        for (var i = 0; i < count; i++)
        {
            if (i == at)
            {
                midway();
            }

            yield return ImportTests.Block(i);
        }

        await Task.CompletedTask;
    }

    private static IBlockDatabase Build(string path, string provider, CapturingLoggerFactory log) =>
        new BlockDatabaseBuilder(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,
            Index = { Layout = BlockLayout.KeyMap, KeyMapFile = KeyMapFileMode.Off },
            Batching = { CommitEvery = 1 },
        }).UseLoggerFactory(log).Build();
}
