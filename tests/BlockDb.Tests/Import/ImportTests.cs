using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Opening;

namespace BlockDb.Tests.Import;

/// <summary>
/// Bulk import (<see cref="IBlockDatabase.ImportBlocksAsync"/>, <see cref="IBlockDatabase.ImportBlocksetsAsync"/>) for
/// every provider and layout, PostgreSQL included: select-xor-insert semantics, transactions that are all or nothing,
/// resuming after a failure, a cancellation or a killed process, typed errors for bad input.
/// </summary>
public sealed class ImportTests : ConformanceTestBase
{
    /// <summary>Block <paramref name="i"/> of an import (the CrashWriter's import mode makes the same ones).</summary>
    public static ImportBlock Block(int i, long? volumeId = null) => new(new BlockKey(new BlockHash(SHA256.HashData(BitConverter.GetBytes(i))), 100 + (i % 7)), volumeId);

    private static async IAsyncEnumerable<T> Stream<T>(IEnumerable<T> items, int failAt = -1)
    {
        var n = 0;
        foreach (var item in items)
        {
            if (n++ == failAt)
            {
                throw new IOException($"the input failed at item {failAt}");
            }

            yield return item;
            if (n % 500 == 0)
            {
                await Task.Yield();
            }
        }
    }

    private sealed class Reports : IProgress<ImportProgress>
    {
        public List<ImportProgress> Seen { get; } = [];

        public void Report(ImportProgress value)
        {
            lock (Seen)
            {
                Seen.Add(value);
            }
        }
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Blocks_import_in_transactions_skipping_known_and_repeated_ones(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        long first, second;
        long known;
        await using (var session = await db.OpenSessionAsync())
        {
            first = await session.RegisterVolumeAsync("b-1.zip", VolumeState.Uploaded);
            second = await session.RegisterVolumeAsync("b-2.zip", VolumeState.Uploaded);
            known = (await session.SelectXorInsertAsync(Block(5).Block)).Id;
            await session.CommitAsync();
        }

        // 3,000 blocks, volumes alternating in runs of 250, each block twice in a row now and then.
        var input = Enumerable.Range(0, 3000).SelectMany(i => (i % 97 == 0 ? new[] { i, i } : [i]).Select(k => Block(k, (k / 250) % 2 == 0 ? first : second))).ToList();
        var reports = new Reports();
        var result = await db.ImportBlocksAsync(Stream(input), new ImportOptions { ItemsPerTransaction = 700, Progress = reports });

        Assert.Equal(input.Count, result.Read);
        Assert.Equal(2999, result.Created);
        Assert.Equal(input.Count - 2999, result.Existing);
        Assert.Equal((input.Count + 699) / 700, result.Transactions);
        Assert.Equal(result.Transactions, reports.Seen.Count);
        Assert.Equal(result.Created, reports.Seen[^1].Created);
        Assert.All(reports.Seen.Take(reports.Seen.Count - 1), r => Assert.Equal(0, r.Read % 700));

        await using var reader = await db.OpenSessionAsync();
        Assert.Equal(3000, (await reader.GetCountsAsync()).Blocks);
        Assert.Equal(known, await reader.FindBlockAsync(Block(5).Block));
        Assert.Null((await reader.GetBlockAsync(known)).VolumeId); // a known block keeps its own volume
        var late = await reader.FindBlockAsync(Block(2999).Block);
        Assert.Equal(second, (await reader.GetBlockAsync(late!.Value)).VolumeId);
        Assert.Equal(250 * 6 - 1, (await reader.GetVolumeAsync(first)).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_failed_input_keeps_the_committed_transactions_and_a_second_run_resumes(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        var input = Enumerable.Range(0, 2600).Select(i => Block(i)).ToList();
        var failure = await Assert.ThrowsAsync<IOException>(async () => await db.ImportBlocksAsync(Stream(input, failAt: 2300), new ImportOptions { ItemsPerTransaction = 1000 }));
        Assert.Contains("2300", failure.Message, StringComparison.Ordinal);
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(2000, (await session.GetCountsAsync()).Blocks); // two whole transactions, none of the third
        }

        var again = await db.ImportBlocksAsync(Stream(input), new ImportOptions { ItemsPerTransaction = 1000 });
        Assert.Equal((2600L, 600L, 2000L), (again.Read, again.Created, again.Existing));
        await using var reader = await db.OpenSessionAsync();
        Assert.Equal(2600, (await reader.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Cancellation_and_bad_blocks_roll_back_only_the_transaction_in_progress(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        using var cancel = new CancellationTokenSource();
        var reports = new Reports();
        var progress = new SyncProgress(p =>
        {
            reports.Report(p);
            cancel.Cancel(); // after the first commit
        });
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 5000).Select(i => Block(i))), new ImportOptions { ItemsPerTransaction = 400, Progress = progress }, cancel.Token));
        Assert.Single(reports.Seen);

        var bad = Enumerable.Range(10_000, 900).Select(i => Block(i)).Append(new ImportBlock(default)).Append(Block(20_000));
        var invalid = await Assert.ThrowsAsync<ArgumentException>(async () => await db.ImportBlocksAsync(Stream(bad), new ImportOptions { ItemsPerTransaction = 400 }));
        Assert.Contains("Block 900", invalid.Message, StringComparison.Ordinal);
        var none = await Assert.ThrowsAsync<ArgumentException>(async () => await db.ImportBlocksAsync(Stream(new[] { Block(1) with { Block = default } })));
        Assert.Contains("default(BlockKey)", none.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await db.ImportBlocksAsync(Stream(new[] { Block(1) }), new ImportOptions { ItemsPerTransaction = 0 }));
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await db.ImportBlocksAsync(null!));

        await using var reader = await db.OpenSessionAsync();
        Assert.Equal(400 + 800, (await reader.GetCountsAsync()).Blocks); // one transaction before the cancel, two before the bad block
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Blocksets_import_after_their_blocks_and_a_full_hash_is_imported_once(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 200).Select(i => Block(i))));
        BlockKey Key(int i) => Block(i).Block;
        var files = Enumerable.Range(0, 60)
            .Select(f => new ImportBlockset([.. Enumerable.Range(f, 1 + (f % 9)).Select(Key)], f % 10 == 9 ? default : TestData.Bytes(f % 50)))
            .Append(new ImportBlockset([], TestData.Bytes(7777)))
            .ToList();
        var result = await db.ImportBlocksetsAsync(Stream(files), new ImportOptions { ItemsPerTransaction = 16 });

        // Files f and f + 50 (f < 10) share a full hash; when their lengths match, the later one is skipped.
        var expectedSkips = Enumerable.Range(50, 10).Count(f => f % 10 != 9 && Length(f) == Length(f - 50));
        Assert.Equal((61L, 61L - expectedSkips, (long)expectedSkips), (result.Read, result.Created, result.Existing));
        await using var reader = await db.OpenSessionAsync();
        var third = await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(3)), Length(3));
        Assert.NotNull(third);
        Assert.Equal(Enumerable.Range(3, 4).Select(i => Block(i).Block.Hash.ToString()), (await reader.ListBlocksetBlocksAsync(third.Value)).Select(b => b.Block.Hash.ToString()));
        Assert.Equal(0, (await reader.GetBlocksetAsync((await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(7777)), 0))!.Value)).Length);

        var again = await db.ImportBlocksetsAsync(Stream(files.Where(f => !f.FullHash.IsEmpty)));
        Assert.Equal(0, again.Created);

        var missing = new ImportBlockset([Key(1), Key(5000)], TestData.Bytes(9999));
        var notFound = await Assert.ThrowsAsync<BlockNotFoundException>(async () => await db.ImportBlocksetsAsync(Stream(new[] { missing })));
        Assert.Equal(1, notFound.Position);
        Assert.Null(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(9999)), Block(1).Block.Size + Block(5000).Block.Size));

        var unnamed = new ImportBlockset([Key(1), default], TestData.Bytes(9998));
        var refused = await Assert.ThrowsAsync<ArgumentException>(async () => await db.ImportBlocksetsAsync(Stream(new[] { unnamed })));
        Assert.StartsWith("Block 1 of blockset ", refused.Message, StringComparison.Ordinal);
        Assert.Contains("of the import is default(BlockKey)", refused.Message, StringComparison.Ordinal);

        static long Length(int f) => Enumerable.Range(f, 1 + (f % 9)).Sum(i => Block(i).Block.Size);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_blockset_longer_than_a_long_is_refused_and_keeps_the_committed_transactions(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open();
        BlockKey[] huge = [TestData.Block(1, long.MaxValue), TestData.Block(2, long.MaxValue)];
        await db.ImportBlocksAsync(Stream(huge.Select(k => new ImportBlock(k, null)).Append(Block(1))));
        BlockKey[] fine = [huge[0]];
        var files = new[] { new ImportBlockset(fine, TestData.Bytes(1)), new ImportBlockset(fine, TestData.Bytes(2)), new ImportBlockset(huge, TestData.Bytes(3)) };

        var refused = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(
            async () => await db.ImportBlocksetsAsync(Stream(files), new ImportOptions { ItemsPerTransaction = 1 }));

        Assert.Contains("Blockset 2 of the import is longer than", refused.Message, StringComparison.Ordinal);
        Assert.Contains("at block 1", refused.Message, StringComparison.Ordinal);
        Assert.Contains("2 blocksets were committed before it", refused.Message, StringComparison.Ordinal);
        await using var reader = await db.OpenSessionAsync();
        Assert.NotNull(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(2)), long.MaxValue));
        Assert.Null(await reader.FindBlocksetAsync(BlockHash.Parse(TestData.Hash(3)), long.MaxValue));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_blockset_import_cancelled_mid_transaction_keeps_none_of_that_transactions_blocksets(string provider, BlockLayout layout)
    {
        // An imported blockset is written with no savepoint of its own: the import transaction is what is all or nothing.
        Use(provider, layout);
        await using var db = Open();
        await db.ImportBlocksAsync(Stream(Enumerable.Range(0, 30).Select(i => Block(i))));
        var files = Enumerable.Range(0, 6).Select(f => new ImportBlockset([.. Enumerable.Range(f * 5, 5).Select(i => Block(i).Block)], TestData.Bytes(f))).ToList();
        using var cancel = new CancellationTokenSource();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await db.ImportBlocksetsAsync(CancelAt(files, 3, cancel), new ImportOptions { ItemsPerTransaction = 2 }, cancel.Token));

        await using var reader = await db.OpenSessionAsync();
        var counts = await reader.GetCountsAsync();
        Assert.Equal((2L, 10L), (counts.Blocksets, counts.BlocksetEntries)); // the first transaction; nothing of the second's written blockset
        Assert.True((await db.CheckAsync()).IsClean);

        static async IAsyncEnumerable<ImportBlockset> CancelAt(List<ImportBlockset> files, int at, CancellationTokenSource cancel)
        {
            for (var i = 0; i < files.Count; i++)
            {
                if (i == at)
                {
                    cancel.Cancel();
                }

                yield return files[i];
            }

            await Task.CompletedTask;
        }
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task A_read_only_database_refuses_an_import(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (Open())
        {
        }

        await using var db = Open(o => o.ReadOnly = true);
        var e = await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await db.ImportBlocksAsync(Stream(new[] { Block(1) })));
        AssertReadOnlyCode(e);
    }

    [Theory]
    [MemberData(nameof(Providers), MemberType = typeof(ImportTests))]
    public async Task An_import_killed_mid_transaction_leaves_whole_transactions_and_resumes(string provider)
    {
        Use(provider, BlockLayout.KeyMap);
        await using (Open())
        {
        }

        const int Count = 200_000;
        using var child = new ChildProcess("import", DbPath, provider, Count.ToString(CultureInfo.InvariantCulture));
        await child.Ready.WaitAsync(TimeSpan.FromSeconds(60));
        var until = DateTime.UtcNow.AddSeconds(120);
        while (child.Lines.Count(l => l.StartsWith("COMMITTED ", StringComparison.Ordinal)) < 3 && DateTime.UtcNow < until && !child.Lines.Contains("DONE"))
        {
            await Task.Delay(10);
        }

        child.Kill();
        var committed = child.Lines.Where(l => l.StartsWith("COMMITTED ", StringComparison.Ordinal)).Select(l => long.Parse(l.Split(' ')[1], CultureInfo.InvariantCulture)).ToList();
        Assert.True(committed.Count >= 3, string.Join('\n', child.Lines.TakeLast(20)));

        await using var db = Open();
        long blocks;
        await using (var session = await db.OpenSessionAsync())
        {
            blocks = (await session.GetCountsAsync()).Blocks;
        }

        Assert.Equal(0, blocks % 5000); // whole transactions only
        Assert.True(blocks >= committed[^1], $"{blocks} blocks in the file, {committed[^1]} acknowledged");
        Assert.True((await db.CheckAsync()).IsClean);

        var resumed = await db.ImportBlocksAsync(Stream(Enumerable.Range(0, Count).Select(i => Block(i))), new ImportOptions { ItemsPerTransaction = 50_000 });
        Assert.Equal((Count - blocks, blocks), (resumed.Created, resumed.Existing));
        await using var reader = await db.OpenSessionAsync();
        Assert.Equal(Count, (await reader.GetCountsAsync()).Blocks);
        Assert.True((await db.CheckAsync()).IsClean);
    }

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    private sealed class SyncProgress(Action<ImportProgress> report) : IProgress<ImportProgress>
    {
        public void Report(ImportProgress value) => report(value);
    }
}
