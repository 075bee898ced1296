using System.Collections.Concurrent;
using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb.Tests;

/// <summary>
/// Adversarial tests against the KeyMap layout's invariants and the concurrency claims (issue 10). Each test states
/// the claim it attacks; a failing test is a finding. Real files in temp folders, raw SQL through the PInvoke driver.
/// </summary>
public sealed class AttackTests : IDisposable
{
    private static readonly TimeSpan Hang = TimeSpan.FromSeconds(15);
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    private IBlockDatabase Open(string name, Action<BlockDbOptions>? configure = null, string provider = "PInvoke")
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = _folder.File(name), Index = { Layout = BlockLayout.KeyMap } };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    /// <summary>Runs a statement meant to tamper with the guards; the file refusing it (SQLITE_CONSTRAINT) is the right outcome, and the attack then goes on without it.</summary>
    private static bool Tamper(RawSql raw, string sql)
    {
        try
        {
            raw.Execute(sql);
            return false;
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            return true;
        }
    }

    private static (long MaxBlockId, long Generation) State(RawSql raw) =>
        (raw.Scalar("""SELECT "MaxBlockId" FROM "BlockDbState" """), raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """));

    private static string Dump(RawSql raw) =>
        string.Join(", ", raw.Blocks().Select(b => $"{b.Id}:{b.Hash[..6]}/{b.Size}"))
        + $" state=({raw.Text("""SELECT "MaxBlockId" || ', ' || "Generation" FROM "BlockDbState" """)})";

    /// <summary>Inserts Hash(0..count-1) at size 10 through BlockDb, committed, and returns their IDs.</summary>
    private static async Task<long[]> SeedAsync(IBlockRepository session, int count, int first = 0)
    {
        var ids = new long[count];
        for (var i = 0; i < count; i++)
        {
            ids[i] = (await session.SelectXorInsertAsync(TestData.Hash(first + i), 10)).Id;
        }

        await session.CommitAsync();
        return ids;
    }

    // ---------------------------------------------------------------------------------------------------------
    // 1. The guards: "MaxBlockId and Generation never decrease; the state row cannot be deleted" (plain DML only).
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_replace_into_BlockDbState_rewinds_MaxBlockId_and_Generation()
    {
        await using (var db = Open("replace-state.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 10);
        }

        using var raw = new RawSql(_folder.File("replace-state.db"));
        raw.Execute("""UPDATE "Block" SET "Size" = "Size" + 1 WHERE "ID" = 1"""); // a guarded update: Generation 0 -> 1
        var before = State(raw);
        Assert.Equal((10L, 1L), before);

        // REPLACE deletes the conflicting row without firing delete triggers (recursive_triggers is off by default)
        // and inserts a new one, which fires no UPDATE trigger: neither BlockDbStateKeep nor BlockDbStateNoRewind runs.
        BlockDbException? refused = null;
        try
        {
            raw.Execute("""INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") VALUES (1, 0, 0)""");
        }
        catch (BlockDbException e)
        {
            refused = e;
        }

        var after = State(raw);
        Assert.True(
            refused is not null || (after.MaxBlockId >= before.MaxBlockId && after.Generation >= before.Generation),
            $"BlockDbState went back from {before} to {after} through INSERT OR REPLACE, a plain DML statement the guards were meant to refuse.");
    }

    [Fact]
    public async Task Attack_generation_rewound_by_replace_then_a_gap_insert_makes_BlockDb_insert_a_duplicate()
    {
        var path = _folder.File("aba.db");
        await using var db = Open("aba.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        using var raw = new RawSql(path);

        // Generation 0 -> 1, and the map reloads at generation 1 (W = 10).
        raw.Execute("""UPDATE "Block" SET "Size" = "Size" + 1 WHERE "ID" = 1""");
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1000), 10));

        // Foreign SQL, DML only: free ID 5, rewind Generation to 0 by REPLACE, then put a new block into the gap. The
        // gap insert is guarded (5 <= MaxBlockId) and bumps Generation back to 1: the map's (W, G) = (10, 1) looks valid.
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, "MaxBlockId", "Generation" - 1 FROM "BlockDbState" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);

        var result = await session.SelectXorInsertAsync(TestData.Hash(100), 10);
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5 (rows: {Dump(raw)}).");
    }

    [Fact]
    public async Task Attack_MaxBlockId_rewound_by_replace_hides_a_gap_insert_and_BlockDb_inserts_a_duplicate()
    {
        var path = _folder.File("rewind-max.db");
        await using var db = Open("rewind-max.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1000), 10)); // the map is loaded: W = 10
        using var raw = new RawSql(path);

        // MaxBlockId 10 -> 0 (Generation kept): the gap insert at 5 is then above MaxBlockId and bumps nothing.
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, 0, "Generation" FROM "BlockDbState" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        raw.InsertBlock(TestData.Hash(200), 10); // SQLite picks 11

        var result = await session.SelectXorInsertAsync(TestData.Hash(100), 10);
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5 (rows: {Dump(raw)}).");
    }

    [Fact]
    public async Task Attack_MaxBlockId_rewound_by_replace_makes_BlockDb_pick_an_ID_that_is_taken()
    {
        var path = _folder.File("rewind-collide.db");
        await using var db = Open("rewind-collide.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1000), 10));
        using (var raw = new RawSql(path))
        {
            Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, 0, "Generation" FROM "BlockDbState" """);
        }

        // Claim: BlockDb inserts at max(MaxBlockId, highest row ID) + 1. It uses the highest row *above W* instead,
        // which is none here, so it picks ID 1.
        var insert = await Record.ExceptionAsync(async () => await session.SelectXorInsertAsync(TestData.Hash(500), 10));
        Assert.True(insert is null, $"A new block could not be inserted: {insert?.GetType().Name}: {insert?.Message}");
    }

    [Fact]
    public async Task Attack_generation_raised_to_the_largest_integer_stops_counting_and_a_gap_insert_goes_unseen()
    {
        var path = _folder.File("saturate.db");
        await using var db = Open("saturate.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        using var raw = new RawSql(path);

        // Raising Generation is allowed (it never goes back). At 2^63 - 1 the guards' "Generation + 1" overflows to the
        // REAL 9.223372036854776e18, which reads back through sqlite3_column_int64 as 2^63 - 1 again, and stays there.
        Tamper(raw, """UPDATE "BlockDbState" SET "Generation" = 9223372036854775807""");
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1000), 10)); // the map reloads at that generation

        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.InsertBlock(TestData.Hash(100), 10, id: 5); // guarded: 5 <= MaxBlockId, so Generation "+ 1"
        var generation = raw.Text("""SELECT typeof("Generation") || ' ' || "Generation" FROM "BlockDbState" """);

        var result = await session.SelectXorInsertAsync(TestData.Hash(100), 10);
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5; the gap insert's bump left Generation at '{generation}' (rows: {Dump(raw)}).");
    }

    [Fact]
    public async Task Attack_a_foreign_row_with_a_hash_no_lookup_can_ask_for_is_refused_or_ignored_never_fatal()
    {
        var path = _folder.File("long-hash.db");
        await using (var db = Open("long-hash.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 5);
        }

        using (var raw = new RawSql(path))
        {
            // A new row above MaxBlockId with a 100-byte hash (a foreign tool's SHA-512 + salt, say): the guard refuses it.
            var refused = Assert.Throws<BlockDbException>(() => raw.Execute("""INSERT INTO "Block" ("Hash", "Size") VALUES (randomblob(100), 10)"""));
            Assert.Equal(SqliteResultCode.Constraint, refused.SqliteErrorCode);

            // An older file may hold such rows already (here: written while the guard was dropped).
            var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardInsert'""")!;
            raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
            raw.Execute("""INSERT INTO "Block" ("Hash", "Size") VALUES (randomblob(100), 10)""");
            raw.Execute("""INSERT INTO "Block" ("Hash", "Size") VALUES ('a text hash', 10)""");
            raw.Execute(guard);
        }

        await using (var db = Open("long-hash.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            // The map skips rows no lookup can ask for (hash texts decode to at most 66 bytes): BlockDb keeps working.
            Assert.True((await session.SelectXorInsertAsync(TestData.Hash(50), 10)).Created);
            Assert.Equal(1, await session.FindBlockAsync(TestData.Hash(0), 10));
            await session.CommitAsync();
            var check = await db.CheckAsync();
            Assert.Equal(2, check.UnusableBlocks.Count); // the 100-byte BLOB and the TEXT hash (KeyMap stores BLOBs)
            Assert.False(check.IsClean);
            Assert.Equal(0, check.MapMissing.Count);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 2. The guards against DDL: a guard replaced under its own name is never noticed by an open key map.
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_guard_trigger_dropped_and_recreated_around_a_gap_insert_gives_a_duplicate_in_an_open_database()
    {
        var path = _folder.File("ddl.db");
        await using var db = Open("ddl.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Hash(1000), 10));

        using var raw = new RawSql(path);
        var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardInsert'""")!;
        raw.Execute("BEGIN IMMEDIATE");
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        raw.Execute(guard);
        raw.Execute("COMMIT");

        var result = await session.SelectXorInsertAsync(TestData.Hash(100), 10);
        await session.CommitAsync();
        var check = await db.CheckAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} (rows: {Dump(raw)}); CheckAsync says GuardsPresent = {check.GuardsPresent}, DuplicateGroups = {check.DuplicateGroups}.");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 3. Batches: "an idle batch is committed by a timer"; "every write acknowledged as committed is present".
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_a_failed_age_commit_is_lost_silently_when_the_session_is_disposed()
    {
        var path = _folder.File("age-busy.db");
        await using var db = Open("age-busy.db", o =>
        {
            o.Pragmas.Preset = PragmaPreset.SqliteDefaults; // DELETE journal, busy_timeout 0: a reader makes COMMIT fail with BUSY
            o.Batching.CommitEvery = 0;
            o.Batching.CommitAfterMilliseconds = 300;
            o.Batching.OnDispose = DisposeBehavior.Commit;
        });
        var session = await db.OpenSessionAsync();
        var written = await session.SelectXorInsertAsync(TestData.Hash(1), 10);
        Assert.True(written.Created);

        using (var reader = new RawSql(path))
        {
            reader.Execute("BEGIN");
            reader.Scalar("""SELECT COUNT(*) FROM "Block" """); // holds SHARED until COMMIT
            await Task.Delay(1000); // the age timer fires meanwhile; its COMMIT fails with BUSY and the batch is rolled back
            reader.Execute("COMMIT");
        }

        // The caller now ends the session, which commits (OnDispose = Commit) and reports a failure to end the batch.
        var disposeError = await Record.ExceptionAsync(async () => await session.DisposeAsync());
        using var raw = new RawSql(path);
        var stored = raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        Assert.True(
            disposeError is not null || stored == 1,
            $"SelectXorInsert returned {written}, DisposeAsync (OnDispose = Commit) returned without an error, yet the file holds {stored} blocks: the age commit's failure was deferred to a next call that never came.");
    }

    [Theory]
    [InlineData(PragmaPreset.SqliteDefaults)]
    [InlineData(PragmaPreset.Recommended)]
    public async Task Attack_a_read_that_makes_SQLite_roll_the_batch_back_goes_unnoticed_and_the_next_insert_runs_without_the_write_lock(PragmaPreset preset)
    {
        using var disk = SmallDisk.Mount(_folder.File("full"), sizeKiB: 1024);
        var path = Path.Combine(disk.Path, "index.db");
        void Configure(BlockDbOptions o)
        {
            o.Pragmas.Preset = preset;
            o.Pragmas.CacheSize = 16; // pages: a large batch spills, and a read of many pages must spill dirty pages to make room
            o.Pragmas.MmapSize = 0;
            o.Pragmas.BusyTimeout = 0;
            o.Batching.CommitEvery = 0;
        }

        await using var a = Open(path, Configure);
        await using var sa = await a.OpenSessionAsync();
        await SeedAsync(sa, 10);
        var batchIds = new List<long>();
        for (var i = 100; i < 4100; i++)
        {
            batchIds.Add((await sa.SelectXorInsertAsync(TestData.Hash(i), 10)).Id); // one open batch of 4000 blocks, spilling as it grows
        }

        var big = await sa.AddBlocksetAsync(batchIds); // and a blockset naming them all: a read of it touches every page
        Assert.Equal(4001, sa.PendingWrites);

        // The disk fills up (another program, another file); then a read call on the session.
        var filler = Path.Combine(disk.Path, "filler");
        using (var stream = File.Create(filler))
        {
            var chunk = new byte[4096];
            try
            {
                while (true)
                {
                    stream.Write(chunk);
                    stream.Flush();
                }
            }
            catch (IOException)
            {
            }
        }

        var read = await Record.ExceptionAsync(async () => await sa.ListBlocksetBlocksAsync(big));
        File.Delete(filler);
        Assert.True(read is BlockDbException { SqliteErrorCode: SqliteResultCode.Full }, $"setup: the read did not fail with SQLITE_FULL ({read?.GetType().Name}: {read?.Message})");

        // SQLite rolled the whole batch back (a special error in a statement without a statement journal), but only
        // failed writes are checked for that: the session still believes it holds its transaction and the write lock.
        await using var b = Open(path, Configure);
        await using (var sb = await b.OpenSessionAsync())
        {
            var other = await Record.ExceptionAsync(async () =>
            {
                await sb.SelectXorInsertAsync(TestData.Hash(9000), 10);
                await sb.CommitAsync();
            });
            Assert.True(other is null, $"setup: another database could not write, so session a still holds its batch ({other?.Message})");
        }

        var result = await sa.SelectXorInsertAsync(TestData.Hash(9000), 10);
        var pending = sa.PendingWrites;
        var commit = await Record.ExceptionAsync(async () => await sa.CommitAsync());
        using var raw = new RawSql(path);
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"After the read failed with '{read!.Message}', session a reported {pending} pending writes, its SelectXorInsert of a block database b had committed returned {result} (a miss it took as authoritative, "
            + $"written outside any transaction) and its CommitAsync said: {commit?.Message}. Rows: {raw.Blocks().Count}, duplicate groups: {raw.DuplicateGroups()}.");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 4. Dispose: "Dispose (session, shared repository, database) waits for or fails every call in flight".
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_database_dispose_returns_while_its_RepairAsync_still_runs_and_writes_the_file()
    {
        var path = _folder.File("repair-dispose.db");
        await using (var db = Open("repair-dispose.db"))
        {
        }

        using (var raw = new RawSql(path))
        {
            // 400,000 rows in 200,000 duplicate pairs (foreign SQL), so the repair has work for a while.
            raw.Execute("BEGIN");
            raw.Execute("""WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000) INSERT INTO "Block" ("ID", "Hash", "Size") SELECT x, CAST(printf('%032d', x / 2) AS BLOB), 10 FROM c""");
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 400000""");
            raw.Execute("COMMIT");
        }

        var database = Open("repair-dispose.db");
        var repair = database.RepairAsync().AsTask();
        var check = database.CheckAsync().AsTask();
        await database.DisposeAsync();
        var (repairDone, checkDone) = (repair.IsCompleted, check.IsCompleted);
        long rowsAtDispose;
        using (var raw = new RawSql(path))
        {
            rowsAtDispose = raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        }

        var repairOutcome = await Record.ExceptionAsync(() => repair.WaitAsync(Hang));
        var checkOutcome = await Record.ExceptionAsync(() => check.WaitAsync(Hang));
        long rowsAfter;
        using (var raw = new RawSql(path))
        {
            rowsAfter = raw.Scalar("""SELECT COUNT(*) FROM "Block" """);
        }

        Assert.True(
            (repairDone || repairOutcome is ObjectDisposedException) && (checkDone || checkOutcome is ObjectDisposedException),
            $"DisposeAsync returned with RepairAsync {(repairDone ? "done" : "still running")} and CheckAsync {(checkDone ? "done" : "still running")}; "
            + $"afterwards the repair {(repairOutcome is null ? "succeeded" : repairOutcome.GetType().Name)} and the check {(checkOutcome is null ? "succeeded" : checkOutcome.GetType().Name)}; "
            + $"the file had {rowsAtDispose} blocks when Dispose returned and {rowsAfter} later: the disposed database kept writing it.");
    }

    [Fact]
    public async Task Attack_a_second_concurrent_dispose_returns_with_writes_pending_and_the_database_then_fails_queued_writes()
    {
        var options = (BlockDbOptions o) =>
        {
            o.Pragmas.Preset = PragmaPreset.SqliteDefaults; // DELETE journal, synchronous FULL: commits take a while
            o.Pragmas.BusyTimeout = 5000;
            o.GroupCommit.MaxBatchSize = 8;
        };

        // (1) Deterministic: two DisposeAsync calls on one shared repository. "No call is left pending after DisposeAsync returns."
        int pendingAfterSecond;
        await using (var db = Open("double-dispose.db", options))
        {
            var shared = db.OpenSharedRepository();
            var writes = Enumerable.Range(0, 400).Select(i => shared.InsertBlockAsync(TestData.Hash(i), 10).AsTask()).ToArray();
            var first = shared.DisposeAsync().AsTask();
            await shared.DisposeAsync().AsTask().WaitAsync(Hang); // returns at once: _disposed was already set
            pendingAfterSecond = writes.Count(w => !w.IsCompleted);
            await first.WaitAsync(Hang);
            await Task.WhenAll(writes).WaitAsync(Hang); // the first dispose does commit them all
        }

        // (2) The same race through the database: its Dispose is that second caller, then disposes the shared repository's
        // writer session (OnDispose = Rollback) under the writer loop. Writes queued before any dispose then fail.
        var failedWrites = 0;
        var pendingAfterDatabase = 0;
        for (var trial = 0; trial < 5; trial++)
        {
            var db = Open($"race-{trial}.db", options);
            var shared = db.OpenSharedRepository();
            var writes = Enumerable.Range(0, 400).Select(i => shared.InsertBlockAsync(TestData.Hash(i), 10).AsTask()).ToArray();
            var disposeShared = shared.DisposeAsync().AsTask();
            await db.DisposeAsync().AsTask().WaitAsync(Hang);
            pendingAfterDatabase += writes.Count(w => !w.IsCompleted);
            await disposeShared.WaitAsync(Hang);
            var outcomes = await Task.WhenAll(writes.Select(w => Record.ExceptionAsync(() => w))).WaitAsync(Hang);
            failedWrites += outcomes.Count(e => e is ObjectDisposedException);
        }

        Assert.True(
            pendingAfterSecond == 0 && pendingAfterDatabase == 0 && failedWrites == 0,
            $"A second DisposeAsync of the shared repository returned with {pendingAfterSecond} of 400 queued writes pending. Disposing the database while the shared repository was disposing "
            + $"returned with {pendingAfterDatabase} of 5 x 400 writes pending, and {failedWrites} writes queued before any dispose failed with ObjectDisposedException instead of committing.");
    }

    // ---------------------------------------------------------------------------------------------------------
    // 5. Memory: the key map near its limit, and files whose IDs are sparse.
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_a_generation_bump_fails_a_working_key_map_near_its_limit_though_no_row_was_added()
    {
        await using var db = Open("limit-bump.db", o =>
        {
            o.Index.KeyMapMemoryLimitMegabytes = 1;
            o.Batching.CommitEvery = 1000;
        });
        await using var session = await db.OpenSessionAsync();
        var stored = 0;
        for (var i = 0; i < 200_000; i++)
        {
            try
            {
                await session.SelectXorInsertAsync(TestData.Hash(i), 10);
                stored++;
            }
            catch (BlockDbConfigurationException)
            {
                break;
            }
        }

        await session.CommitAsync();
        Assert.InRange(stored, 50_000, 131_072);
        Assert.Null(await session.FindBlockAsync(TestData.Hash(-1), 10)); // a miss catches up: fine at this size
        Assert.Equal(1, await session.FindBlockAsync(TestData.Hash(0), 10));

        // A generation bump with no row added (a foreign tool raising the counter), but the map rereads the whole table into itself.
        using (var raw = new RawSql(_folder.File("limit-bump.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "Generation" = "Generation" + 1""");
        }

        var miss = await Record.ExceptionAsync(async () => await session.FindBlockAsync(TestData.Hash(-1), 10));
        var hit = await Record.ExceptionAsync(async () => await session.FindBlockAsync(TestData.Hash(0), 10));
        Assert.True(
            miss is null && hit is null,
            $"The map held {stored} blocks and worked; after a generation bump that added no row every lookup fails: {miss?.GetType().Name}: {miss?.Message}");
    }

    [Fact]
    public async Task Attack_a_sparse_file_makes_the_first_load_reserve_memory_for_MaxBlockId_rows_not_for_the_rows_it_has()
    {
        await using (var db = Open("sparse.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 10);
        }

        // The state of a file where 20 million blocks were written over time and all but 10 deleted since (IDs are
        // never reused, so MaxBlockId stays at its high-water mark). Raising MaxBlockId is what BlockDb itself does.
        using (var raw = new RawSql(_folder.File("sparse.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 20000000""");
        }

        await using (var db = Open("sparse.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Hash(0), 10));
            var (blocks, bytes) = db.KeyMapUsage;
            Assert.True(bytes < 16 << 20, $"The key map holds {blocks} blocks in {bytes / 1048576.0:F0} MB (the docs say 10-20 MB per million blocks): its first load reserved room for MaxBlockId - Count rows.");
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 6. Read-only: "every write call throws BlockDbReadOnlyException and nothing is written".
    // ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Attack_read_only_shared_repository_answers_a_select_xor_insert_instead_of_refusing_it()
    {
        await using (var db = Open("ro.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 3);
        }

        await using var readOnly = Open("ro.db", o => o.ReadOnly = true);
        await using (var session = await readOnly.OpenSessionAsync())
        {
            // The session refuses every write call, existing block or not.
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.SelectXorInsertAsync(TestData.Hash(0), 10));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.SelectXorInsertAsync(TestData.Hash(99), 10));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.InsertBlockAsync(TestData.Hash(99), 10));
            await Assert.ThrowsAsync<BlockDbReadOnlyException>(async () => await session.AddBlocksetAsync([TestData.Block(0, 10)]));
        }

        await using var shared = readOnly.OpenSharedRepository();
        await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.SelectXorInsertAsync(TestData.Hash(99), 10).AsTask());
        await Assert.ThrowsAsync<BlockDbReadOnlyException>(() => shared.AddBlocksetAsync([TestData.Block(0, 10)]).AsTask());
        var existing = await Record.ExceptionAsync(() => shared.SelectXorInsertAsync(TestData.Hash(0), 10).AsTask());
        Assert.True(existing is BlockDbReadOnlyException, $"The read-only shared repository answered SelectXorInsertAsync for an existing block ({existing?.GetType().Name ?? "no exception"}), where a read-only session refuses the same call.");
    }

    // ---------------------------------------------------------------------------------------------------------
    // Attacks that did not break anything (kept as regression tests).
    // ---------------------------------------------------------------------------------------------------------

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
    public async Task Attack_two_maps_and_a_foreign_writer_interleaved_give_no_duplicate_and_no_wrong_id(int seed)
    {
        var path = _folder.File("mix.db");
        await using var a = Open("mix.db", o => o.Batching.CommitEvery = 0);
        await using var b = Open("mix.db", o => o.Batching.CommitEvery = 0, provider: "MicrosoftData");
        IBlockRepository[] sessions = [await a.OpenSessionAsync(), await a.OpenSessionAsync(), await b.OpenSessionAsync()];
        using var raw = new RawSql(path);
        var rng = new Random(seed);
        static BlockKey Key(int k) => new(TestData.Hash(k / 3), 10 + (k % 3));
        const int Keys = 240;
        var fresh = Keys;

        Dictionary<BlockKey, long> Present() => raw.Blocks().ToDictionary(r => new BlockKey(r.Hash, r.Size), r => r.Id);
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
                results.Add((key, await session.SelectXorInsertAsync(key.Hash, key.Size)));
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
                var blob = Convert.FromBase64String(key.Hash);
                switch (rng.Next(7))
                {
                    case 0 when ids.Count > 0:
                        raw.Execute($"""DELETE FROM "Block" WHERE "ID" = {ids[rng.Next(ids.Count)]}""");
                        break;
                    case 1 when ids.Count > 3:
                        raw.Execute($"""DELETE FROM "Block" WHERE "ID" > {ids[^(1 + rng.Next(3))] - 1}""");
                        raw.InsertBlock(key.Hash, key.Size);
                        break;
                    case 2 when max > ids.Count:
                        var gap = Enumerable.Range(1, (int)max).First(i => !ids.Contains(i));
                        raw.InsertBlock(key.Hash, key.Size, id: gap);
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
                        raw.InsertBlock(key.Hash, key.Size);
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
                var found = await s.FindBlockAsync(key.Hash, key.Size);
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
    public async Task Attack_sessions_on_threads_committing_and_rolling_back_never_duplicate_or_miss(int busyTimeout)
    {
        var path = _folder.File("threads.db");
        await using var a = Open("threads.db", o => { o.Batching.CommitEvery = 0; o.Pragmas.BusyTimeout = busyTimeout; });
        await using var b = Open("threads.db", o => { o.Batching.CommitEvery = 0; o.Pragmas.BusyTimeout = busyTimeout; });
        var committed = new ConcurrentDictionary<int, long>();
        var failures = new ConcurrentQueue<string>();
        var stop = DateTime.UtcNow.AddSeconds(4);
        var opened = new List<IBlockRepository>();
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
                        var r = await session.SelectXorInsertAsync(TestData.Hash(k), 10);
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
                        found = await session.FindBlockAsync(TestData.Hash(k), 10);
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

    /// <summary>Lock-free lookups while the map grows (many resizes): a committed block is always found at its ID.</summary>
    [Fact]
    public async Task Attack_lookups_during_map_growth_always_find_committed_blocks()
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
                    ? await session.FindBlockAsync(TestData.Hash(k), 10)
                    : (await session.SelectXorInsertAsync(TestData.Hash(k), 10)).Id;
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
                ids[i] = (await writer.SelectXorInsertAsync(TestData.Hash(i), 10)).Id;
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
        Assert.Equal(ids.Length, db.KeyMapUsage.Blocks);
    }

    /// <summary>Hashes of 1, 2, 3, 64 and 66 bytes, prefixes of each other, and one hash at 300 sizes, through two maps.</summary>
    [Fact]
    public async Task Attack_unusual_hash_lengths_and_one_hash_at_many_sizes()
    {
        var keys = new List<BlockKey>();
        foreach (var bytes in new[] { 1, 2, 3, 31, 32, 33, 63, 64, 65, 66 })
        {
            keys.Add(new(Convert.ToBase64String(new byte[bytes]), 7));
            keys.Add(new(Convert.ToBase64String(Enumerable.Repeat((byte)0xFF, bytes).ToArray()), 7));
        }

        keys.AddRange(Enumerable.Range(1, 300).Select(size => new BlockKey(TestData.Hash(5), size)));
        await using (var a = Open("hashes.db"))
        await using (var b = Open("hashes.db", provider: "SystemData"))
        await using (var sa = await a.OpenSessionAsync())
        await using (var sb = await b.OpenSessionAsync())
        {
            var ids = new Dictionary<BlockKey, long>();
            for (var i = 0; i < keys.Count; i++)
            {
                var s = i % 2 == 0 ? sa : sb;
                var r = await s.SelectXorInsertAsync(keys[i].Hash, keys[i].Size);
                Assert.True(r.Created, $"{keys[i]} was not created");
                ids[keys[i]] = r.Id;
                await s.CommitAsync();
            }

            foreach (var key in keys)
            {
                Assert.Equal(new SelectXorInsertResult(ids[key], false), await sb.SelectXorInsertAsync(key.Hash, key.Size));
                Assert.Equal(ids[key], await sa.FindBlockAsync(key.Hash, key.Size));
            }
        }

        using var raw = new RawSql(_folder.File("hashes.db"));
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.Equal(keys.Count, raw.Blocks().Count);
    }

    /// <summary>The age timer fires during calls on three sessions; once the calls stop, every batch is committed by the timer alone.</summary>
    [Fact]
    public async Task Attack_age_timer_during_calls_commits_every_idle_batch()
    {
        var path = _folder.File("age.db");
        await using var db = Open("age.db", o => { o.Batching.CommitEvery = 0; o.Batching.CommitAfterMilliseconds = 3; });
        var sessions = new List<IBlockRepository>();
        var results = new ConcurrentBag<(int Key, long Id)>();
        await Task.WhenAll(Enumerable.Range(0, 3).Select(t => Task.Run(async () =>
        {
            var session = await db.OpenSessionAsync();
            lock (sessions)
            {
                sessions.Add(session);
            }

            var rng = new Random(t);
            for (var i = 0; i < 400; i++)
            {
                await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                var k = rng.Next(600);
                results.Add((k, (await session.SelectXorInsertAsync(TestData.Hash(k), 10)).Id));
                if (i % 50 == 0)
                {
                    await session.FindBlockAsync(TestData.Hash(k), 10);
                }
            }
        }))).WaitAsync(Hang);

        await Task.Delay(500); // idle: the timers commit
        using (var raw = new RawSql(path))
        {
            var rows = raw.Blocks().ToDictionary(r => r.Id);
            Assert.Equal(0, raw.DuplicateGroups());
            Assert.All(results, r => Assert.True(rows.TryGetValue(r.Id, out var row) && row.Hash == TestData.Hash(r.Key), $"block {r.Key} at {r.Id} not committed by the age timer"));
        }

        Assert.All(sessions, s => Assert.Equal(0, s.PendingWrites));
        foreach (var s in sessions)
        {
            await s.DisposeAsync();
        }
    }

    /// <summary>Sixteen tasks on the shared repository, disposed under them: no call hangs, every acknowledged write is there.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Attack_shared_repository_disposed_under_sixteen_tasks(bool disposeTheDatabase)
    {
        var path = _folder.File("shared.db");
        var db = Open("shared.db", o => o.GroupCommit.MaxDelayMilliseconds = 2);
        var shared = db.OpenSharedRepository();
        var blocks = new ConcurrentBag<(BlockKey Key, long Id)>();
        var sets = new ConcurrentBag<(long Id, BlockKey[] Blocks)>();
        var failures = new ConcurrentQueue<Exception>();
        var tasks = Enumerable.Range(0, 16).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            try
            {
                while (true)
                {
                    await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                    var set = Enumerable.Range(0, rng.Next(1, 5)).Select(_ => TestData.Block(rng.Next(400), 10 + rng.Next(2))).ToArray();
                    foreach (var key in set)
                    {
                        blocks.Add((key, (await shared.SelectXorInsertAsync(key.Hash, key.Size)).Id));
                    }

                    sets.Add((await shared.AddBlocksetAsync(set), set));
                    if (await shared.FindBlockAsync(set[0].Hash, set[0].Size) is null)
                    {
                        failures.Enqueue(new InvalidOperationException($"committed block {set[0]} not found"));
                    }
                }
            }
            catch (ObjectDisposedException)
            {
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToArray();

        await Task.Delay(1000);
        if (disposeTheDatabase)
        {
            await db.DisposeAsync().AsTask().WaitAsync(Hang);
        }
        else
        {
            await shared.DisposeAsync().AsTask().WaitAsync(Hang);
            await db.DisposeAsync();
        }

        await Task.WhenAll(tasks).WaitAsync(Hang);
        Assert.Empty(failures);
        Assert.True(sets.Count > 20, $"only {sets.Count} blocksets and {blocks.Count} blocks acknowledged");
        await using var check = Open("shared.db");
        await using var session = await check.OpenSessionAsync();
        foreach (var (key, id) in blocks)
        {
            Assert.Equal(id, await session.FindBlockAsync(key.Hash, key.Size));
        }

        foreach (var (id, set) in sets)
        {
            Assert.Equal(set, (await session.ListBlocksetBlocksAsync(id)).Select(b => new BlockKey(b.Hash, b.Size)));
        }

        using var raw = new RawSql(path);
        Assert.Equal(0, raw.DuplicateGroups());
    }

    /// <summary>A database disposed while sessions on eight threads run calls: every call ends, committed batches are there.</summary>
    [Fact]
    public async Task Attack_database_disposed_under_running_session_calls()
    {
        var path = _folder.File("dispose.db");
        var db = Open("dispose.db", o => { o.Batching.CommitEvery = 5; o.Batching.CommitAfterMilliseconds = 20; });
        var committed = new ConcurrentBag<(int Key, long Id)>();
        var pending = new ConcurrentBag<(int Key, long Id)>();
        var failures = new ConcurrentQueue<Exception>();
        var tasks = Enumerable.Range(0, 8).Select(t => Task.Run(async () =>
        {
            var rng = new Random(t);
            try
            {
                var session = await db.OpenSessionAsync();
                var batch = new List<(int, long)>();
                while (true)
                {
                    await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                    var k = rng.Next(500);
                    batch.Add((k, (await session.SelectXorInsertAsync(TestData.Hash(k), 10)).Id));
                    if (rng.Next(4) == 0)
                    {
                        await session.CommitAsync();
                        batch.ForEach(committed.Add);
                        batch.Clear();
                    }

                    foreach (var p in batch)
                    {
                        pending.Add(p); // committed by the database's dispose (OnDispose = Commit) when it reports no error
                    }
                }
            }
            catch (ObjectDisposedException)
            {
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToArray();

        await Task.Delay(300);
        var disposeError = await Record.ExceptionAsync(() => db.DisposeAsync().AsTask().WaitAsync(Hang));
        await Task.WhenAll(tasks).WaitAsync(Hang);
        Assert.Null(disposeError);
        Assert.Empty(failures);
        using var raw = new RawSql(path);
        var rows = raw.Blocks().ToDictionary(r => r.Id);
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.All(committed.Concat(pending), c => Assert.True(rows.TryGetValue(c.Id, out var row) && row.Hash == TestData.Hash(c.Key), $"block {c.Key} at {c.Id} lost"));
    }

    /// <summary>Opening a file (WAL or DELETE journal) while another connection holds the write lock: no wait, no BUSY.</summary>
    [Theory]
    [InlineData(PragmaPreset.Recommended)]
    [InlineData(PragmaPreset.SqliteDefaults)]
    public async Task Attack_opening_beside_a_writer_takes_no_write_lock(PragmaPreset preset)
    {
        var path = _folder.File($"open-{preset}.db");
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
            Assert.Equal(3, await session.FindBlockAsync(TestData.Hash(2), 10));
            Assert.Null(await session.FindBlockAsync(TestData.Hash(50), 10));
            Assert.True((await db.CheckAsync()).IsClean);
        }

        writer.Execute("ROLLBACK");
    }

    /// <summary>RepairAsync on foreign duplicates and out-of-range IDs, with a second database whose map was loaded before.</summary>
    [Fact]
    public async Task Attack_repair_merges_and_renumbers_and_both_maps_follow()
    {
        var path = _folder.File("repair.db");
        await using var a = Open("repair.db", o => o.Batching.CommitEvery = 1);
        await using var b = Open("repair.db", o => o.Batching.CommitEvery = 1);
        await using var sa = await a.OpenSessionAsync();
        await using var sb = await b.OpenSessionAsync();
        await SeedAsync(sa, 10);
        Assert.Null(await sb.FindBlockAsync(TestData.Hash(99), 10)); // b's map loaded
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
            Assert.Equal(4, await s.FindBlockAsync(TestData.Hash(3), 10));
            Assert.Equal(new SelectXorInsertResult(4, false), await s.SelectXorInsertAsync(TestData.Hash(3), 10));
            Assert.False((await s.SelectXorInsertAsync(TestData.Hash(70), 10)).Created);
            Assert.False((await s.SelectXorInsertAsync(TestData.Hash(71), 10)).Created);
        }

        Assert.True((await sa.SelectXorInsertAsync(TestData.Hash(72), 10)).Created);
        using var check = new RawSql(path);
        Assert.Equal(0, check.DuplicateGroups());
        Assert.Equal(0, check.Scalar("""SELECT COUNT(*) FROM "Block" WHERE "ID" NOT BETWEEN 1 AND 4294967295"""));
    }

    /// <summary>The last ID of the layout: BlockDb uses 4294967295, finds it, then refuses cleanly.</summary>
    [Fact]
    public async Task Attack_the_last_block_id()
    {
        await using var db = Open("last.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 2);
        using (var raw = new RawSql(_folder.File("last.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 4294967294""");
        }

        var last = await session.SelectXorInsertAsync(TestData.Hash(7), 10);
        Assert.Equal(new SelectXorInsertResult(4294967295, true), last);
        Assert.Equal(4294967295, await session.FindBlockAsync(TestData.Hash(7), 10));
        var full = await Assert.ThrowsAsync<BlockDbException>(async () => await session.SelectXorInsertAsync(TestData.Hash(8), 10));
        Assert.Equal(SqliteResultCode.Full, full.SqliteErrorCode);
        Assert.Equal(4294967295, await session.FindBlockAsync(TestData.Hash(7), 10));
    }

    /// <summary>
    /// Two writer processes (plain sessions, batches of up to 60) SIGKILLed mid-batch and restarted, while this process
    /// keeps writing the same blocks through two databases: no duplicate, every acknowledged block at its ID.
    /// </summary>
    [Theory]
    [InlineData("session-wal")]
    [InlineData("session-delete")]
    public async Task Attack_writer_processes_killed_mid_batch_while_others_keep_writing(string mode)
    {
        var path = _folder.File($"{mode}.db");
        var preset = mode == "session-wal" ? PragmaPreset.Recommended : PragmaPreset.SqliteDefaults;
        void Configure(BlockDbOptions o)
        {
            o.Batching.CommitEvery = 0;
            o.Pragmas.Preset = preset;
            o.Pragmas.BusyTimeout = 5000;
        }

        await using (var create = Open($"{mode}.db", Configure))
        {
        }

        var acked = new ConcurrentBag<(int Key, long Id)>();
        var stop = DateTime.UtcNow.AddSeconds(8);
        using var killing = new CancellationTokenSource(); // the writers here go on until the kills are done
        var failures = new ConcurrentQueue<string>();
        var local = Enumerable.Range(0, 2).Select(t => Task.Run(async () =>
        {
            var rng = new Random(100 + t);
            await using var db = Open($"{mode}.db", Configure, t == 0 ? "PInvoke" : "MicrosoftData");
            await using var session = await db.OpenSessionAsync();
            var pending = new List<(int, long)>();
            while (!killing.IsCancellationRequested)
            {
                await Task.Yield(); // calls complete synchronously: let other tasks (and timers) run on the two cores
                try
                {
                    var k = rng.Next(3000);
                    pending.Add((k, (await session.SelectXorInsertAsync(TestData.Hash(k), 10)).Id));
                    if (pending.Count >= rng.Next(1, 30))
                    {
                        await session.CommitAsync();
                        pending.ForEach(acked.Add);
                        pending.Clear();
                    }
                }
                catch (BlockDbException e) when (e.IsTransient || e is BlockDbBatchRolledBackException || e.SqliteErrorCode == SqliteResultCode.IOError)
                {
                    pending.Clear();
                    await session.RollbackAsync();
                }
                catch (Exception e)
                {
                    failures.Enqueue(e.ToString());
                    return;
                }
            }

            await session.CommitAsync();
            pending.ForEach(acked.Add);
        })).ToArray();

        var kills = 0;
        var rng = new Random(7);
        // At least two cycles (four kills) however slow the machine, and as many as fit in the time.
        for (var cycle = 0; cycle < 2 || DateTime.UtcNow < stop.AddSeconds(-1); cycle++)
        {
            using var one = new ChildProcess(mode, path, cycle % 2 == 0 ? "PInvoke" : "SystemData", (2 * cycle).ToString(CultureInfo.InvariantCulture));
            using var two = new ChildProcess(mode, path, "PInvoke", ((2 * cycle) + 1).ToString(CultureInfo.InvariantCulture));
            await Task.WhenAll(one.Ready, two.Ready).WaitAsync(TimeSpan.FromSeconds(60));
            await Task.Delay(rng.Next(200, 900));
            one.Kill();
            await Task.Delay(rng.Next(0, 100));
            two.Kill();
            kills += 2;
            foreach (var child in new[] { one, two })
            {
                foreach (var line in child.Lines)
                {
                    if (line.StartsWith("ACKB ", StringComparison.Ordinal))
                    {
                        var parts = line.Split(' ');
                        acked.Add((int.Parse(parts[1], CultureInfo.InvariantCulture), long.Parse(parts[2], CultureInfo.InvariantCulture)));
                    }
                    else if (line.StartsWith("stderr:", StringComparison.Ordinal))
                    {
                        failures.Enqueue(line);
                    }
                }
            }
        }

        await killing.CancelAsync();
        await Task.WhenAll(local).WaitAsync(Hang);
        Assert.Empty(failures);
        Assert.True(kills >= 4 && acked.Count > 100, $"{kills} kills, {acked.Count} acknowledged blocks");
        using var raw = new RawSql(path);
        Assert.Equal("ok", raw.Text("PRAGMA integrity_check"));
        Assert.Equal(0, raw.DuplicateGroups());
        var rows = raw.Blocks().ToDictionary(r => r.Id);
        Assert.All(acked, a => Assert.True(rows.TryGetValue(a.Id, out var row) && row.Hash == TestData.Hash(a.Key), $"acknowledged block {a.Key} at {a.Id} is not there"));
        await using var check = Open($"{mode}.db", Configure);
        var result = await check.CheckAsync();
        Assert.True(result.IsClean, result.ToString());
    }
}
