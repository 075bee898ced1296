using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using Xunit.Abstractions;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The key map never misses a block that is in the file when the miss decides an insert (docs/ARCHITECTURE.md, M1 to
/// M4): several maps (databases, providers), sessions on threads committing and rolling back, lookups while the map
/// grows, a repair that renumbers, and a foreign SQL writer interleaved with them; no duplicate, no wrong ID.
/// </summary>
public sealed class KeyMapCoverageTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    /// <summary>
    /// Two databases (two key maps, two providers) and a foreign SQL writer interleaved step by step: deletes, the
    /// newest rows deleted then auto-ID inserts (SQLite reuses the IDs), explicit IDs into gaps, updates, REPLACE and
    /// UPSERT at existing IDs. The foreign writer only ever writes blocks that are absent, so any duplicate is BlockDb's.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public async Task Two_maps_and_a_foreign_writer_interleaved_give_no_duplicate_and_no_wrong_id(int seed)
    {
        var path = Folder.File("mix.db");
        await using var a = Open("mix.db", o => o.Batching.CommitEvery = 0);
        await using var b = Open("mix.db", o => o.Batching.CommitEvery = 0, provider: "MicrosoftData");
        IBlockSession[] sessions = [await a.OpenSessionAsync(), await a.OpenSessionAsync(), await b.OpenSessionAsync()];
        using var raw = new RawSql(path);
        var rng = new Random(seed);
        static BlockKey Key(int k) => new(TestData.Bytes(k / 3), 10 + (k % 3));
        const int Keys = 240;
        var fresh = Keys;

        Dictionary<BlockKey, long> Present() => raw.Blocks().ToDictionary(r => BlockKey.Parse(r.Hash, r.Size), r => r.Id);
        BlockKey Absent(Dictionary<BlockKey, long> present)
        {
            for (var attempt = 0; attempt < 100; attempt++)
            {
                var key = Key(rng.Next(Keys));
                if (!present.ContainsKey(key))
                {
                    return key;
                }
            }

            return Key(fresh++);
        }

        for (var round = 0; round < 300; round++)
        {
            // BlockDb: a batch on one session, committed or rolled back.
            var session = sessions[rng.Next(sessions.Length)];
            var results = new List<(BlockKey Key, SelectXorInsertResult R)>();
            for (var i = rng.Next(1, 7); i > 0; i--)
            {
                var key = Key(rng.Next(Keys));
                results.Add((key, await session.SelectXorInsertAsync(key)));
            }

            if (rng.Next(5) == 0)
            {
                await session.RollbackAsync();
            }
            else
            {
                await session.CommitAsync();
                var present = Present();
                foreach (var (key, r) in results)
                {
                    Assert.True(present.TryGetValue(key, out var id) && id == r.Id, $"round {round}: SelectXorInsert({key}) returned {r}, the file has it at {(present.TryGetValue(key, out var at) ? at : null)}");
                }
            }

            Assert.True(raw.DuplicateGroups() == 0, $"round {round}: duplicate after BlockDb's batch: {Dump(raw)}");

            // The foreign writer.
            for (var op = rng.Next(1, 4); op > 0; op--)
            {
                var present = Present();
                var ids = present.Values.Order().ToList();
                var max = ids.Count == 0 ? 0 : ids[^1];
                var key = Absent(present);
                var blob = key.Hash.Bytes.ToArray();
                switch (rng.Next(7))
                {
                    case 0 when ids.Count > 0:
                        raw.Execute($"""DELETE FROM "Block" WHERE "ID" = {ids[rng.Next(ids.Count)]}""");
                        break;
                    case 1 when ids.Count > 3:
                        raw.Execute($"""DELETE FROM "Block" WHERE "ID" > {ids[^(1 + rng.Next(3))] - 1}""");
                        raw.InsertBlock(key.Hash.ToString(), key.Size);
                        break;
                    case 2 when max > ids.Count:
                        var gap = Enumerable.Range(1, (int)max).First(i => !ids.Contains(i));
                        raw.InsertBlock(key.Hash.ToString(), key.Size, id: gap);
                        break;
                    case 3 when ids.Count > 0:
                        raw.Execute($"""UPDATE "Block" SET "Hash" = x'{Convert.ToHexString(blob)}', "Size" = {key.Size} WHERE "ID" = {ids[rng.Next(ids.Count)]}""");
                        break;
                    case 4 when ids.Count > 0:
                        raw.Execute($"""INSERT OR REPLACE INTO "Block" ("ID", "Hash", "Size") VALUES ({ids[rng.Next(ids.Count)]}, x'{Convert.ToHexString(blob)}', {key.Size})""");
                        break;
                    case 5 when ids.Count > 0:
                        raw.Execute($"""INSERT INTO "Block" ("ID", "Hash", "Size") VALUES ({ids[rng.Next(ids.Count)]}, x'{Convert.ToHexString(blob)}', {key.Size}) ON CONFLICT ("ID") DO UPDATE SET "Hash" = excluded."Hash", "Size" = excluded."Size" """);
                        break;
                    default:
                        raw.InsertBlock(key.Hash.ToString(), key.Size);
                        break;
                }
            }

            // Lookups on every session: a present block is found at its ID, an absent one is not found.
            var now = Present();
            foreach (var s in sessions)
            {
                // A commit call ends the session's read snapshot (read batching), so the lookup sees the foreign writer's commits.
                await s.CommitAsync();
                var key = Key(rng.Next(Keys));
                var found = await s.FindBlockAsync(key);
                Assert.True(found == (now.TryGetValue(key, out var id) ? id : null), $"round {round}: FindBlock({key}) = {found}, the file has {(now.TryGetValue(key, out var at) ? at : null)}");
            }
        }

        foreach (var s in sessions)
        {
            await s.DisposeAsync();
        }

        Assert.True((await a.CheckAsync()).IsClean);
        Assert.True((await b.CheckAsync()).IsClean);
    }

    /// <summary>Sessions of two databases on four threads: batches of select-xor-inserts committed or rolled back, lookups of blocks others committed.</summary>
    [Theory]
    [InlineData(0)]
    [InlineData(10_000)]
    public async Task Sessions_on_threads_committing_and_rolling_back_never_duplicate_or_miss(int busyTimeout)
    {
        var path = Folder.File("threads.db");
        await using var a = Open("threads.db", o => { o.Batching.CommitEvery = 0; o.Pragmas.BusyTimeout = busyTimeout; });
        await using var b = Open("threads.db", o => { o.Batching.CommitEvery = 0; o.Pragmas.BusyTimeout = busyTimeout; });
        var committed = new ConcurrentDictionary<int, long>();
        var failures = new ConcurrentQueue<string>();
        var stop = DateTime.UtcNow.AddSeconds(4);
        var opened = new List<IBlockSession>();
        for (var t = 0; t < 4; t++)
        {
            opened.Add(await (t % 2 == 0 ? a : b).OpenSessionAsync()); // opened one by one: with busy_timeout 0 a concurrent open can meet WAL recovery (BUSY)
        }

        var tasks = Enumerable.Range(0, 4).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            await using var session = opened[t];
            while (DateTime.UtcNow < stop)
            {
                await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                var batch = new List<(int Key, long Id)>();
                try
                {
                    for (var i = rng.Next(1, 5); i > 0; i--)
                    {
                        var k = rng.Next(300);
                        var r = await session.SelectXorInsertAsync(TestData.Block(k, 10));
                        batch.Add((k, r.Id));
                    }

                    if (rng.Next(3) == 0)
                    {
                        await session.RollbackAsync();
                    }
                    else
                    {
                        await session.CommitAsync();
                        foreach (var (k, id) in batch)
                        {
                            var first = committed.GetOrAdd(k, id);
                            if (first != id)
                            {
                                failures.Enqueue($"block {k}: committed at {first} and at {id}");
                            }
                        }
                    }
                }
                catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException)
                {
                    await session.RollbackAsync();
                }

                // Blocks committed before this lookup started must be found, at their ID.
                foreach (var (k, id) in committed.ToArray().OrderBy(_ => rng.Next()).Take(3))
                {
                    long? found;
                    try
                    {
                        found = await session.FindBlockAsync(TestData.Block(k, 10));
                    }
                    catch (BlockDbException e) when (e.IsTransient)
                    {
                        continue;
                    }

                    if (found != id)
                    {
                        failures.Enqueue($"FindBlock({k}) = {found?.ToString(CultureInfo.InvariantCulture) ?? "null"}, committed at {id}");
                    }
                }
            }
        })).ToArray();
        await Task.WhenAll(tasks).WaitAsync(Hang);

        using var raw = new RawSql(path);
        Assert.Empty(failures);
        Assert.Equal(0, raw.DuplicateGroups());
        var rows = raw.Blocks().ToDictionary(r => r.Id);
        Assert.True(committed.Count > 50, $"only {committed.Count} blocks committed");
        Assert.All(committed, c => Assert.Equal((TestData.Hash(c.Key), 10L), (rows[c.Value].Hash, rows[c.Value].Size)));
    }

    // Defect 1: RollbackBatch releases the write lock before BlockKeyMap.Rewind, so a session that begins in that
    // window records the rolled-back top ID as its rewind point; when it rolls back in turn, the map's watermark stays
    // above the committed rows, and rows later committed at those IDs (by another database) are never read.
    [Fact]
    public async Task Rollbacks_racing_each_other_never_hide_a_block_another_database_commits()
    {
        var path = Folder.File("race.db");
        await using var db = OpenWith(path, "PInvoke", o =>
        {
            o.Index.Layout = BlockLayout.KeyMap;
            o.Pragmas.BusyTimeout = 0;
            o.Batching.CommitEvery = 0;
        });
        await using var other = OpenWith(path, "PInvoke", o => o.Pragmas.BusyTimeout = 5000);
        await using var s1 = await db.OpenSessionAsync();
        await using var s2 = await db.OpenSessionAsync();
        await using var writer = await other.OpenSessionAsync();
        Assert.Null(await s1.FindBlockAsync(TestData.Block(-1, 1))); // both maps loaded (empty)
        Assert.Null(await writer.FindBlockAsync(TestData.Block(-1, 1)));

        var next = 0;
        int NextSeed() => Interlocked.Increment(ref next);
        var clock = Stopwatch.StartNew();
        var rounds = 0;
        var bursts = 0;
        var missed = false;
        List<(string Hash, long Id, long? Found)> check = [];
        while (!missed && clock.Elapsed < TimeSpan.FromSeconds(4))
        {
            bursts++;
            using var stop = new CancellationTokenSource();

            // s1: a few new blocks, then roll them back.
            var rollbacks = Task.Run(async () =>
            {
                try
                {
                    for (var i = 0; i < 200; i++)
                    {
                        for (var b = 0; b < 3; b++)
                        {
                            await RetryBusyAsync(() => s1.SelectXorInsertAsync(TestData.Block(NextSeed(), 10)));
                        }

                        await s1.RollbackAsync();
                        Interlocked.Increment(ref rounds);
                    }
                }
                finally
                {
                    await stop.CancelAsync();
                }
            });

            // s2: keeps retrying a new block through SQLITE_BUSY (busy_timeout 0), and rolls its batch back too.
            // (When s2 commits instead, the commit fills the IDs the stale watermark skips and the race leaves no trace.)
            var retries = Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    await RetryBusyAsync(() => s2.SelectXorInsertAsync(TestData.Block(NextSeed(), 10)));
                    await s2.RollbackAsync();
                }
            });
            await Task.WhenAll(rollbacks, retries);

            // A second database (another process, in effect) commits new blocks; the first must find each of them.
            check = [];
            for (var i = 0; i < 3; i++)
            {
                var hash = TestData.Hash(NextSeed());
                check.Add((hash, (await writer.SelectXorInsertAsync(BlockKey.Parse(hash, 10))).Id, null));
            }

            await writer.CommitAsync();
            for (var i = 0; i < check.Count; i++)
            {
                check[i] = (check[i].Hash, check[i].Id, await s1.FindBlockAsync(BlockKey.Parse(check[i].Hash, 10)));
            }

            missed = check.Any(c => c.Found != c.Id);
        }

        var again = new List<SelectXorInsertResult>();
        foreach (var c in check)
        {
            again.Add(await s1.SelectXorInsertAsync(BlockKey.Parse(c.Hash, 10)));
        }

        await s1.CommitAsync();
        var duplicates = RawQuery(path, DuplicatesSql);
        var report = string.Join(", ", check.Select((c, i) => $"committed at {c.Id}, found {c.Found?.ToString(CultureInfo.InvariantCulture) ?? "null"}, select-xor-insert {again[i].Id}{(again[i].Created ? " created" : string.Empty)}"));
        Output.WriteLine($"{(missed ? "missed" : "no miss")} after {rounds} rollback rounds in {bursts} bursts ({clock.Elapsed.TotalSeconds:F1} s); last check: {report}; duplicated blocks: {duplicates}");
        Assert.False(missed, $"after {rounds} rollback rounds the first database missed a block the second one committed: {report}; duplicated blocks: {duplicates}");
        Assert.All(check.Zip(again), x => Assert.Equal(new SelectXorInsertResult(x.First.Id, false), x.Second));
        Assert.Equal("0", duplicates);
    }

    /// <summary>Lock-free lookups while the map grows (many resizes): a committed block is always found at its ID.</summary>
    [Fact]
    public async Task Lookups_during_map_growth_always_find_committed_blocks()
    {
        await using var db = Open("growth.db", o => o.Batching.CommitEvery = 0);
        var ids = new long[60_000];
        var published = 0;
        var done = false;
        var failures = new ConcurrentQueue<string>();
        var readers = Enumerable.Range(0, 4).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            await using var session = await db.OpenSessionAsync();
            while (!Volatile.Read(ref done))
            {
                await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                var n = Volatile.Read(ref published);
                if (n == 0)
                {
                    continue;
                }

                var k = rng.Next(n);
                var found = t % 2 == 0
                    ? await session.FindBlockAsync(TestData.Block(k, 10))
                    : (await session.SelectXorInsertAsync(TestData.Block(k, 10))).Id;
                if (found != ids[k])
                {
                    failures.Enqueue($"block {k}: {found?.ToString(CultureInfo.InvariantCulture) ?? "null"}, committed at {ids[k]}");
                }

                if (t == 3)
                {
                    await session.CommitAsync(); // nothing to commit: a hit opens no batch
                }
            }
        })).ToArray();

        await using (var writer = await db.OpenSessionAsync())
        {
            for (var i = 0; i < ids.Length; i++)
            {
                ids[i] = (await writer.SelectXorInsertAsync(TestData.Block(i, 10))).Id;
                if (i % 500 == 499)
                {
                    await writer.CommitAsync();
                    Volatile.Write(ref published, i + 1);
                }
            }
        }

        Volatile.Write(ref done, true);
        await Task.WhenAll(readers).WaitAsync(Hang);
        Assert.Empty(failures);
        Assert.Equal(ids.Length, ((ISqliteBlockDatabase)db).KeyMapUsage.Blocks);
    }

    /// <summary>Hashes of 1, 2, 3, 64 and 66 bytes, prefixes of each other, and one hash at 300 sizes, through two maps.</summary>
    [Fact]
    public async Task Unusual_hash_lengths_and_one_hash_at_many_sizes_get_one_row_each_through_two_maps()
    {
        var keys = new List<BlockKey>();
        foreach (var bytes in new[] { 1, 2, 3, 31, 32, 33, 63, 64, 65, 66 })
        {
            keys.Add(new(new BlockHash(new byte[bytes]), 7));
            keys.Add(new(new BlockHash(Enumerable.Repeat((byte)0xFF, bytes).ToArray()), 7));
        }

        keys.AddRange(Enumerable.Range(1, 300).Select(size => BlockKey.Parse(TestData.Hash(5), size)));
        await using (var a = Open("hashes.db"))
        await using (var b = Open("hashes.db", provider: "SystemData"))
        await using (var sa = await a.OpenSessionAsync())
        await using (var sb = await b.OpenSessionAsync())
        {
            var ids = new Dictionary<BlockKey, long>();
            for (var i = 0; i < keys.Count; i++)
            {
                var s = i % 2 == 0 ? sa : sb;
                var r = await s.SelectXorInsertAsync(keys[i]);
                Assert.True(r.Created, $"{keys[i]} was not created");
                ids[keys[i]] = r.Id;
                await s.CommitAsync();
            }

            foreach (var key in keys)
            {
                Assert.Equal(new SelectXorInsertResult(ids[key], false), await sb.SelectXorInsertAsync(key));
                Assert.Equal(ids[key], await sa.FindBlockAsync(key));
            }
        }

        using var raw = new RawSql(Folder.File("hashes.db"));
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.Equal(keys.Count, raw.Blocks().Count);
    }

    /// <summary>RepairAsync on foreign duplicates and out-of-range IDs, with a second database whose map was loaded before.</summary>
    [Fact]
    public async Task Both_open_maps_follow_a_repair_that_merges_and_renumbers()
    {
        var path = Folder.File("repair.db");
        await using var a = Open("repair.db", o => o.Batching.CommitEvery = 1);
        await using var b = Open("repair.db", o => o.Batching.CommitEvery = 1);
        await using var sa = await a.OpenSessionAsync();
        await using var sb = await b.OpenSessionAsync();
        await SeedAsync(sa, 10);
        Assert.Null(await sb.FindBlockAsync(TestData.Block(99, 10))); // b's map loaded
        using (var raw = new RawSql(path))
        {
            raw.InsertBlock(TestData.Hash(3), 10);  // a foreign duplicate of ID 4, at 11
            raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
            raw.InsertBlock(TestData.Hash(70), 10, id: 5_000_000_000);
            raw.InsertBlock(TestData.Hash(71), 10, id: 0);
        }

        await sb.AddBlocksetAsync([TestData.Block(3, 10)]);
        await using (var c = Open("repair.db"))
        {
            var before = await c.CheckAsync();
            Assert.Equal(1, before.DuplicateGroups);
            Assert.Equal(2, before.IdsOutOfRange.Count);
            var repaired = await c.RepairAsync();
            Assert.True(repaired.After.IsClean, repaired.After.ToString());
        }

        foreach (var s in new[] { sa, sb })
        {
            Assert.Equal(4, await s.FindBlockAsync(TestData.Block(3, 10)));
            Assert.Equal(new SelectXorInsertResult(4, false), await s.SelectXorInsertAsync(TestData.Block(3, 10)));
            Assert.False((await s.SelectXorInsertAsync(TestData.Block(70, 10))).Created);
            Assert.False((await s.SelectXorInsertAsync(TestData.Block(71, 10))).Created);
        }

        Assert.True((await sa.SelectXorInsertAsync(TestData.Block(72, 10))).Created);
        using var check = new RawSql(path);
        Assert.Equal(0, check.DuplicateGroups());
        Assert.Equal(0, check.Scalar("""SELECT COUNT(*) FROM "Block" WHERE "ID" NOT BETWEEN 1 AND 4294967295"""));
    }

    private static async Task RetryBusyAsync(Func<ValueTask<SelectXorInsertResult>> call)
    {
        while (true)
        {
            try
            {
                await call();
                return;
            }
            catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
            {
            }
        }
    }
}
