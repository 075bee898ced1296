using System.Globalization;
using Xunit.Abstractions;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The KeyMap file's guards against a foreign writer (docs/ARCHITECTURE.md, F1 to F4): IDs, hashes and sizes in range;
/// MaxBlockId and Generation never go back, whatever plain DML or pragma a connection uses; every other change is
/// flagged, and a flag another trigger cancels fails that write; DDL is seen and no trigger but the guards is accepted.
/// Each test tampers with the file through plain SQL beside an open key map, then asks BlockDb for the block the
/// foreign writer moved: it is found, or the foreign write was refused, never inserted a second time.
/// </summary>
public sealed class KeyMapGuardTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    [Fact]
    public async Task Replace_into_BlockDbState_cannot_rewind_MaxBlockId_or_Generation()
    {
        await using (var db = Open("replace-state.db"))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 10);
        }

        using var raw = new RawSql(Folder.File("replace-state.db"));
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
    public async Task A_gap_insert_after_a_rewound_generation_is_seen_and_never_duplicated()
    {
        await using var seeded = await SeededAsync("aba.db", 10);
        var (_, session, _, raw) = seeded;

        // Generation 0 -> 1, and the map reloads at generation 1 (W = 10).
        raw.Execute("""UPDATE "Block" SET "Size" = "Size" + 1 WHERE "ID" = 1""");
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10)));

        // Foreign SQL, DML only: free ID 5, rewind Generation to 0 by REPLACE, then put a new block into the gap. The
        // gap insert is guarded (5 <= MaxBlockId) and bumps Generation back to 1: the map's (W, G) = (10, 1) looks valid.
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, "MaxBlockId", "Generation" - 1 FROM "BlockDbState" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);

        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5 (rows: {Dump(raw)}).");
    }

    [Fact]
    public async Task A_gap_insert_after_a_rewound_MaxBlockId_is_seen_and_never_duplicated()
    {
        await using var seeded = await SeededAsync("rewind-max.db", 10);
        var (_, session, _, raw) = seeded;
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10))); // the map is loaded: W = 10

        // MaxBlockId 10 -> 0 (Generation kept): the gap insert at 5 is then above MaxBlockId and bumps nothing.
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, 0, "Generation" FROM "BlockDbState" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        raw.InsertBlock(TestData.Hash(200), 10); // SQLite picks 11

        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5 (rows: {Dump(raw)}).");
    }

    [Fact]
    public async Task A_new_block_never_takes_an_id_in_use_after_MaxBlockId_was_rewound()
    {
        var path = Folder.File("rewind-collide.db");
        await using var db = Open("rewind-collide.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10)));
        using (var raw = new RawSql(path))
        {
            Tamper(raw, """INSERT OR REPLACE INTO "BlockDbState" ("Key", "MaxBlockId", "Generation") SELECT 1, 0, "Generation" FROM "BlockDbState" """);
        }

        // Claim: BlockDb inserts at max(MaxBlockId, highest row ID) + 1. It uses the highest row *above W* instead,
        // which is none here, so it picks ID 1.
        var insert = await Record.ExceptionAsync(async () => await session.SelectXorInsertAsync(TestData.Block(500, 10)));
        Assert.True(insert is null, $"A new block could not be inserted: {insert?.GetType().Name}: {insert?.Message}");
    }

    [Fact]
    public async Task A_gap_insert_is_seen_after_the_generation_was_raised_to_the_largest_integer()
    {
        await using var seeded = await SeededAsync("saturate.db", 10);
        var (_, session, _, raw) = seeded;

        // Raising Generation is allowed (it never goes back). At 2^63 - 1 the guards' "Generation + 1" overflows to the
        // REAL 9.223372036854776e18, which reads back through sqlite3_column_int64 as 2^63 - 1 again, and stays there.
        Tamper(raw, """UPDATE "BlockDbState" SET "Generation" = 9223372036854775807""");
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10))); // the map reloads at that generation

        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.InsertBlock(TestData.Hash(100), 10, id: 5); // guarded: 5 <= MaxBlockId, so Generation "+ 1"
        var generation = raw.Text("""SELECT typeof("Generation") || ' ' || "Generation" FROM "BlockDbState" """);

        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} for a block already at ID 5; the gap insert's bump left Generation at '{generation}' (rows: {Dump(raw)}).");
    }

    /// <summary>
    /// Claim (F2): "CHECK constraints keep both integers in range (Generation below 2^62, so "+ 1" never stops
    /// counting)". Mechanism: CHECK constraints are skipped by any connection that sets the documented
    /// "PRAGMA ignore_check_constraints = ON". The foreign connection raises Generation to 1e300 (a REAL; raising is
    /// allowed by BlockDbStateNoRewind). The map reads it with sqlite3_column_int64, which saturates to 2^63 - 1; every
    /// later bump computes 1e300 + 1 = 1e300, so the generation the map sees never moves again: the fix that
    /// A_gap_insert_is_seen_after_the_generation_was_raised_to_the_largest_integer checks is bypassed with one
    /// pragma. Suggested fix: keep the ranges and types in the BlockDbStateNoRewind trigger (RAISE(ABORT) when
    /// typeof(NEW."Generation") or typeof(NEW."MaxBlockId") is not 'integer' or out of range): triggers cannot be
    /// switched off by a pragma. The catch-up could also refuse a state row whose columns are not integers.
    /// </summary>
    [Fact]
    public async Task Ignore_check_constraints_cannot_saturate_the_generation()
    {
        await using var seeded = await SeededAsync("ignore-check.db", 10);
        var (_, session, _, raw) = seeded;
        raw.Execute("PRAGMA ignore_check_constraints = ON");
        var refused = Assert.Throws<BlockDbException>(() => raw.Execute("""UPDATE "BlockDbState" SET "Generation" = 1e300"""));
        Assert.Equal(SqliteResultCode.Constraint, refused.SqliteErrorCode);
        Assert.Throws<BlockDbException>(() => raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 5000000000"""));
        Assert.Equal("integer integer", raw.Text("""SELECT typeof("Generation") || ' ' || typeof("MaxBlockId") FROM "BlockDbState" """));

        // The guard still counts: a gap insert moves the generation and BlockDb finds the block.
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10)));
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        Assert.Equal(new SelectXorInsertResult(5, false), result);
        Assert.Equal(0, raw.DuplicateGroups());
    }

    [Fact]
    public async Task A_foreign_row_with_a_hash_no_lookup_can_ask_for_is_refused_or_ignored_never_fatal()
    {
        var path = Folder.File("long-hash.db");
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
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(50, 10))).Created);
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));
            await session.CommitAsync();
            var check = await db.CheckAsync();
            Assert.Equal(2, check.UnusableBlocks.Count); // the 100-byte BLOB and the TEXT hash (KeyMap stores BLOBs)
            Assert.False(check.IsClean);
            Assert.Equal(0, check.MapMissing.Count);
        }
    }

    /// <summary>
    /// Claim: "never returns an ID whose row holds another block", with foreign SQL inserting blocks. Mechanism: the
    /// guards check the ID and the hash but not the size's type; Size has INTEGER affinity, so 10.5 stays a REAL and
    /// '10 bytes' stays TEXT. The map keys such a row by sqlite3_column_int64(Size) (10) and the verification also
    /// compares column_int64(Size) with the size asked for, so a lookup of (hash, 10) returns the ID of a row whose
    /// size is 10.5 (the SQL of the other layouts, "Size" = 10, does not match it). Suggested fix: the guards refuse
    /// typeof(NEW."Size") &lt;&gt; 'integer' (and Size &lt; 1); the verification (and the map load) checks the column type.
    /// </summary>
    [Theory]
    [InlineData("10.5")]
    [InlineData("'10 bytes'")]
    public async Task A_row_with_a_non_integer_size_is_never_returned_for_an_integer_size(string foreignSize)
    {
        await using var seeded = await SeededAsync("size.db", 3);
        var (db, session, _, raw) = seeded;
        var insert = $"""INSERT INTO "Block" ("Hash", "Size") VALUES ({HexOf(TestData.Hash(100))}, {foreignSize})""";
        Assert.Equal(SqliteResultCode.Constraint, Assert.Throws<BlockDbException>(() => raw.Execute(insert)).SqliteErrorCode);

        // A row an older file already holds (written with the guard away): the map may key it, but never returns it.
        var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardInsert'""")!;
        raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
        raw.Execute(insert);
        var foreignId = raw.Scalar("SELECT last_insert_rowid()");
        raw.Execute(guard);

        var found = await session.FindBlockAsync(TestData.Block(100, 10));
        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        var storedSize = raw.Text(string.Create(CultureInfo.InvariantCulture, $"""SELECT typeof("Size") || ':' || "Size" FROM "Block" WHERE "ID" = {result.Id}"""));
        Assert.True(
            found is null && result.Created,
            $"Asked for (Hash(100), 10 bytes): FindBlock returned {found?.ToString(CultureInfo.InvariantCulture) ?? "null"} and SelectXorInsert {result}, whose row holds size {storedSize} (the foreign row is ID {foreignId}).");
        var check = await db.CheckAsync();
        Assert.Equal(1, check.UnusableBlocks.Count);
        Assert.Equal([foreignId], check.UnusableBlocks.FirstIds);
    }

    /// <summary>
    /// The verification read compares the row with the bound BLOB hash and integer size [M1]: a row the open map keyed
    /// whose hash a foreign writer (the update guard away) rewrote as TEXT of the same bytes, or whose size it rewrote
    /// as a REAL, is never returned for the block; the block is then missing, and a one-call file creates it.
    /// </summary>
    [Theory]
    [InlineData("""SET "Hash" = CAST("Hash" AS TEXT)""")]
    [InlineData("""SET "Size" = "Size" + 0.5""")]
    public async Task A_keyed_row_rewritten_to_another_type_is_never_returned_for_the_block(string rewrite)
    {
        await using var seeded = await SeededAsync("rewritten.db", 3);
        var (_, session, ids, raw) = seeded;
        Assert.Equal(ids[1], await session.FindBlockAsync(TestData.Block(1, 10))); // the map is loaded and keys it

        var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardUpdate'""")!;
        raw.Execute("""DROP TRIGGER "BlockDbGuardUpdate" """);
        raw.Execute(string.Create(CultureInfo.InvariantCulture, $"""UPDATE "Block" {rewrite} WHERE "ID" = {ids[1]}"""));
        raw.Execute(guard);

        await session.SelectXorInsertAsync(TestData.Block(50, 10)); // a write: the next read sees the rewrite
        Assert.Null(await session.FindBlockAsync(TestData.Block(1, 10)));

        // A one-call file verifies its blocks many to a statement: the same comparison.
        var results = new SelectXorInsertResult[2];
        await session.AddBlocksetAsync(new[] { TestData.Block(0, 10), TestData.Block(1, 10) }, results);
        await session.CommitAsync();
        Assert.Equal(new SelectXorInsertResult(ids[0], false), results[0]);
        Assert.True(results[1].Created && results[1].Id != ids[1], $"AddBlockset gave {results[1]} for the row rewritten at ID {ids[1]}.");
        Assert.Equal(new SelectXorInsertResult(results[1].Id, false), await session.SelectXorInsertAsync(TestData.Block(1, 10)));
    }

    // Defect 2: the key map reads only rows above its watermark, so a row at a reused rowid, in a gap below the
    // watermark, or at ID 0 or below is never read; the block is then "not found" and inserted a second time.
    [Theory]
    [InlineData("reused-rowid")]
    [InlineData("gap")]
    [InlineData("zero")]
    [InlineData("negative")]
    public async Task A_row_the_map_never_read_is_found_or_refused_never_duplicated(string where)
    {
        var path = Folder.File("rows.db");
        await using var db = OpenWith(path, "PInvoke", o => o.Index.Layout = BlockLayout.KeyMap);
        await using var session = await db.OpenSessionAsync();
        for (var i = 1; i <= 10; i++)
        {
            Assert.Equal(i, (await session.SelectXorInsertAsync(TestData.Block(i, 100))).Id);
        }

        await session.CommitAsync();
        Assert.Equal(10, await session.FindBlockAsync(TestData.Block(10, 100))); // the map is loaded up to ID 10

        var hash = TestData.Hash(1000);
        long rowId;
        using (var raw = RawOpen(path))
        {
            try
            {
                switch (where)
                {
                    case "reused-rowid":
                        raw.Execute("""DELETE FROM "Block" WHERE "ID" = (SELECT MAX("ID") FROM "Block")""");
                        RawInsert(raw, null, hash, 100);
                        break;
                    case "gap":
                        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
                        RawInsert(raw, 5, hash, 100);
                        break;
                    case "zero":
                        RawInsert(raw, 0, hash, 100);
                        break;
                    default:
                        RawInsert(raw, -7, hash, 100);
                        break;
                }
            }
            catch (BlockDbException e) when (where is "zero" or "negative")
            {
                // F1: IDs below 1 are refused by the guard, whoever writes; then nothing of the write is in the file.
                Output.WriteLine($"The file refused the foreign write ({where}): {e.Message}");
                Assert.Equal(SqliteResultCode.ConstraintTrigger, e.SqliteExtendedErrorCode);
                Assert.Equal("0", raw.QueryText("""SELECT COUNT(*) FROM "Block" WHERE "ID" < 1"""));
                return;
            }

            rowId = long.Parse(raw.QueryText("SELECT last_insert_rowid()")!, CultureInfo.InvariantCulture);
        }

        // A commit call ends the session's read snapshot (read batching), so the lookup sees the foreign commit.
        await session.CommitAsync();
        var found = await session.FindBlockAsync(BlockKey.Parse(hash, 100));
        var result = await session.SelectXorInsertAsync(BlockKey.Parse(hash, 100));
        await session.CommitAsync();
        var duplicates = RawQuery(path, DuplicatesSql);
        Output.WriteLine($"{where}: foreign row at ID {rowId}; FindBlockAsync returned {found?.ToString(CultureInfo.InvariantCulture) ?? "null"}; SelectXorInsertAsync returned {result}; duplicated blocks: {duplicates}");
        Assert.True(found == rowId, $"{where}: the foreign row is at ID {rowId}, FindBlockAsync returned {found?.ToString(CultureInfo.InvariantCulture) ?? "null"} (then SelectXorInsertAsync gave {result}, {duplicates} duplicated block)");
        Assert.Equal(new SelectXorInsertResult(rowId, false), result);
        Assert.Equal("0", duplicates);
    }

    // Defect 3a: a block inserted at ID 2^32 is refused by the map only after the INSERT ran, and the failure path
    // (ReleaseIdleBatch) then commits the refused row; the next load of the map then fails on it.
    [Fact]
    public async Task An_insert_above_the_largest_id_is_refused_and_not_committed()
    {
        var path = Folder.File("uintmax.db");
        await CreateBlocksAsync(path, 3);
        if (!TryRawInsert(path, uint.MaxValue, TestData.Hash(50), 10))
        {
            return;
        }

        var before = long.Parse(RawQuery(path, """SELECT COUNT(*) FROM "Block" """)!, CultureInfo.InvariantCulture);
        Exception? refused;
        await using (var db = OpenWith(path, "PInvoke"))
        await using (var session = await db.OpenSessionAsync())
        {
            refused = await Record.ExceptionAsync(async () => await session.SelectXorInsertAsync(TestData.Block(51, 10)));
            Output.WriteLine($"Select-xor-insert of a new block above ID {uint.MaxValue}: {refused?.GetType().Name ?? "succeeded"} {refused?.Message}");
        }

        var after = long.Parse(RawQuery(path, """SELECT COUNT(*) FROM "Block" """)!, CultureInfo.InvariantCulture);
        var top = RawQuery(path, """SELECT MAX("ID") FROM "Block" """);
        if (refused is not null)
        {
            Assert.True(after == before, $"the insert failed ({refused.GetType().Name}) but its row was committed: {before} rows before, {after} after reopening, max ID {top}");
        }

        await using (var db = OpenWith(path, "PInvoke"))
        await using (var session = await db.OpenSessionAsync())
        {
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(1, 10)));
        }
    }

    /// <summary>The last ID of the layout: BlockDb uses 4294967295, finds it, then refuses cleanly.</summary>
    [Fact]
    public async Task The_last_block_id_is_used_and_found_and_the_next_new_block_is_refused_with_full()
    {
        await using var db = Open("last.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 2);
        using (var raw = new RawSql(Folder.File("last.db")))
        {
            raw.Execute("""UPDATE "BlockDbState" SET "MaxBlockId" = 4294967294""");
        }

        var last = await session.SelectXorInsertAsync(TestData.Block(7, 10));
        Assert.Equal(new SelectXorInsertResult(4294967295, true), last);
        Assert.Equal(4294967295, await session.FindBlockAsync(TestData.Block(7, 10)));
        var full = await Assert.ThrowsAsync<BlockDbException>(async () => await session.SelectXorInsertAsync(TestData.Block(8, 10)));
        Assert.Equal(SqliteResultCode.Full, full.SqliteErrorCode);
        Assert.Equal(4294967295, await session.FindBlockAsync(TestData.Block(7, 10)));
    }

    /// <summary>
    /// Claim (F3): "any update of ID, Hash or Size bumps Generation". Mechanism: BlockDbGuardUpdate is
    /// "AFTER UPDATE OF "ID", "Hash", "Size"", and SQLite decides whether an UPDATE OF trigger fires by comparing the
    /// *names* in the SET list with the trigger's column list; "rowid", "_rowid_" and "oid" are aliases of the INTEGER
    /// PRIMARY KEY "ID" but not names in that list, so "UPDATE "Block" SET rowid = 5 WHERE "ID" = 10" moves a block
    /// into a gap with no trigger at all. Plain DML, no DDL, no pragma. The block's map entry (ID 10) no longer
    /// verifies, its new ID 5 is at or below W, the catch-up stays incremental, and BlockDb stores the block again.
    /// Suggested fix: make the guard "AFTER UPDATE ON "Block"" (every update; optionally WHEN OLD."ID" IS NOT NEW."ID"
    /// OR OLD."Hash" IS NOT NEW."Hash" OR OLD."Size" IS NOT NEW."Size").
    /// </summary>
    [Theory]
    [InlineData("rowid")]
    [InlineData("_rowid_")]
    [InlineData("oid")]
    public async Task An_update_through_a_rowid_alias_is_flagged_like_any_id_change(string alias)
    {
        var path = Folder.File($"rowid-{alias}.db");
        await using var db = Open($"rowid-{alias}.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        var ids = await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10))); // the map is loaded: W = 10

        using var raw = new RawSql(path);
        var before = raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """);
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.Execute(string.Create(CultureInfo.InvariantCulture, $"""UPDATE "Block" SET {alias} = 5 WHERE "ID" = {ids[9]}"""));
        var after = raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """);

        var result = await session.SelectXorInsertAsync(TestData.Block(9, 10));
        await session.CommitAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert(Hash(9)) returned {result}; the block was moved from {ids[9]} to 5 by SET {alias} (Generation {before} -> {after}; rows: {Dump(raw)}).");
    }

    /// <summary>
    /// Claim: "an insert at or below MaxBlockId ... bumps Generation, in the writer's own transaction", whoever writes.
    /// Mechanism: the foreign connection creates a TEMP trigger (it lives in the temp schema of that connection only,
    /// so main's schema_version does not move and no BlockDb connection ever sees it) that answers every UPDATE of
    /// main.BlockDbState with RAISE(IGNORE). The guard BlockDbGuardInsert still fires on the gap insert, but its
    /// "UPDATE BlockDbState SET Generation = Generation + 1" is skipped without an error (RAISE(IGNORE) in a BEFORE
    /// trigger abandons the row and lets the statement go on). The open map's (W, V) stays valid-looking; its
    /// incremental catch-up only reads rows above W; the miss is taken as authoritative and BlockDb inserts the block
    /// again. Suggested fix: make the flag unskippable: end each guard with
    /// "SELECT RAISE(ABORT, ...) WHERE changes() &lt;&gt; 1" after its UPDATE (inside a trigger, changes() is the count of
    /// the trigger's own last statement, 0 when a BEFORE trigger ignored the row), or refuse the gap insert outright.
    /// </summary>
    [Fact]
    public async Task A_temp_trigger_that_cancels_the_generation_bump_makes_the_foreign_write_fail_not_BlockDb_duplicate()
    {
        var path = Folder.File("temp-trigger.db");
        await using var db = Open("temp-trigger.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10))); // the map is loaded: W = 10

        using var raw = new RawSql(path);
        var before = raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """);
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.Execute("""CREATE TEMP TRIGGER "Quiet" BEFORE UPDATE ON main."BlockDbState" BEGIN SELECT RAISE(IGNORE); END""");
        var refused = Assert.Throws<BlockDbException>(() => raw.InsertBlock(TestData.Hash(100), 10, id: 5)); // a gap insert, guarded: 5 <= MaxBlockId
        Assert.Equal(SqliteResultCode.Constraint, refused.SqliteErrorCode);
        Assert.Contains("change counter did not move", refused.Message, StringComparison.Ordinal);
        raw.Execute("""DROP TRIGGER temp."Quiet" """);
        Assert.Equal(before, raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """));

        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        Assert.True(result.Created);
        Assert.True(raw.DuplicateGroups() == 0, $"rows: {Dump(raw)}");
    }

    [Fact]
    public async Task A_guard_dropped_and_recreated_around_a_gap_insert_is_seen_by_an_open_key_map()
    {
        var path = Folder.File("ddl.db");
        await using var db = Open("ddl.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10)));

        using var raw = new RawSql(path);
        var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardInsert'""")!;
        raw.Execute("BEGIN IMMEDIATE");
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        raw.Execute(guard);
        raw.Execute("COMMIT");

        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        var check = await db.CheckAsync();
        Assert.True(
            raw.DuplicateGroups() == 0,
            $"BlockDb inserted a duplicate: SelectXorInsert returned {result} (rows: {Dump(raw)}); CheckAsync says GuardsPresent = {check.GuardsPresent}, DuplicateGroups = {check.DuplicateGroups}.");
    }

    /// <summary>
    /// Claim: "F4, DDL is seen ... a map that sees it reads the whole table again and first checks every guard's exact
    /// text". Mechanism: the check looks only at the five guard triggers; any other trigger is accepted. A foreign
    /// trigger in main (created once; the map reloads once and is satisfied) cancels the guards' generation bump with
    /// RAISE(IGNORE) for every writer from then on, so later gap inserts by any foreign tool are never flagged.
    /// (A trigger on all UPDATEs of BlockDbState would also cancel BlockDb's own RaiseMaxBlockId.) Suggested fix: the guard
    /// check (KeyMapGuardRows / GuardsIntact, and Schema.GuardsIntact) must refuse every trigger of the main schema
    /// other than the five guards (any trigger on any table can write Block or BlockDbState), and the guards should
    /// verify their UPDATE happened (changes() = 1).
    /// </summary>
    [Fact]
    public async Task A_foreign_trigger_in_main_stops_the_key_map_instead_of_silencing_the_flag()
    {
        await using var seeded = await SeededAsync("main-trigger.db", 10);
        var (db, session, _, raw) = seeded;
        raw.Execute("""CREATE TRIGGER "Audit" BEFORE UPDATE OF "Generation" ON "BlockDbState" BEGIN SELECT RAISE(IGNORE); END""");

        // BlockDb sees the schema change and stops trusting its key map: it names the trigger rather than write around it.
        var stopped = await Assert.ThrowsAsync<BlockDbFormatException>(async () => await SeedAsync(session, 5, first: 10));
        Assert.Contains("Audit", stopped.Message, StringComparison.Ordinal);
        Assert.False((await db.CheckAsync()).GuardsPresent);
        Assert.Throws<BlockDbFormatException>(() => Open("main-trigger.db"));

        // Dropped, the file is usable again.
        raw.Execute("""DROP TRIGGER "Audit" """);
        await using var reopened = Open("main-trigger.db");
        await using var fresh = await reopened.OpenSessionAsync();
        Assert.Equal(1, await fresh.FindBlockAsync(TestData.Block(0, 10)));
        Assert.Equal(0, raw.DuplicateGroups());
    }

    /// <summary>
    /// Claim (M4): "a session holding the write lock catches up once per write transaction ... No other writer can
    /// commit until it ends, so from then on the shared map plus the session's own table hold every block of the file".
    /// Mechanism: a foreign trigger in main writes Block rows inside BlockDb's own transaction, after its catch-up (here
    /// on BlocksetEntry: AddBlocksetAsync fires it). The row lands in a gap (the generation is bumped, correctly), but the
    /// session never looks at the generation again in this transaction: its next miss is "authoritative" and it inserts
    /// the block a second time. Suggested fix: refuse foreign triggers (as above), or compare sqlite3_total_changes()
    /// before/after each of BlockDb's own statements and treat extra changes as a lost catch-up.
    /// </summary>
    [Fact]
    public async Task A_foreign_trigger_that_writes_blocks_inside_BlockDbs_transaction_is_refused()
    {
        var path = Folder.File("inner-trigger.db");
        await using var db = Open("inner-trigger.db", o => o.Batching.CommitEvery = 0);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        using (var raw = new RawSql(path))
        {
            raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
            raw.Execute($"""CREATE TRIGGER "Mirror" AFTER INSERT ON "BlocksetEntry" WHEN NEW."Index" = 0 BEGIN INSERT OR IGNORE INTO "Block" ("ID", "Hash", "Size") VALUES (5, {HexOf(TestData.Hash(100))}, 10); END""");
        }

        // The trigger is refused before BlockDb writes anything beside it.
        await Assert.ThrowsAsync<BlockDbFormatException>(async () => await session.SelectXorInsertAsync(TestData.Block(50, 10)));
        using var check = new RawSql(path);
        Assert.Equal(0, check.DuplicateGroups());
        Assert.Equal(9, check.Scalar("""SELECT COUNT(*) FROM "Block" """));
    }

    /// <summary>
    /// Claim (F4): "Any schema change (a guard dropped and re-created around a write, say) moves SQLite's
    /// schema_version". Mechanism: the foreign connection drops the insert guard, fills a gap, re-creates the guard with
    /// its exact text, and writes the schema cookie back with "PRAGMA schema_version = N" (allowed unless
    /// SQLITE_DBCONFIG_DEFENSIVE is on in that connection). The map's (Generation, schema_version) is unchanged, so
    /// the catch-up stays incremental and the gap row is never read. This is the attack of
    /// A_guard_dropped_and_recreated_around_a_gap_insert_is_seen_by_an_open_key_map, fixed with schema_version,
    /// replayed with one more statement (PRAGMA writable_schema edits of sqlite_schema, which never move the cookie,
    /// are the same hole). Suggested fix: the schema cookie cannot be trusted against a connection that
    /// writes it; either document that writing schema_version or writable_schema voids the guarantee (SQLite itself
    /// calls both corruption risks), or add a content check the cookie cannot fake, e.g. the map keeps COUNT(*) and
    /// SUM(ID) of the rows at or below W and the catch-up compares them in its snapshot (cheap with the rowid b-tree
    /// only if maintained incrementally; otherwise on full reloads only).
    /// </summary>
    [Fact]
    public async Task A_schema_version_written_back_voids_the_guard_as_sqlite_warns_but_check_finds_and_repair_merges_the_duplicate()
    {
        var path = Folder.File("cookie.db");
        await using var db = Open("cookie.db", o => o.Batching.CommitEvery = 1);
        await using var session = await db.OpenSessionAsync();
        await SeedAsync(session, 10);
        Assert.Null(await session.FindBlockAsync(TestData.Block(1000, 10)));

        using var raw = new RawSql(path);
        var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardInsert'""")!;
        var cookie = raw.Scalar("PRAGMA schema_version");
        raw.Execute("""DELETE FROM "Block" WHERE "ID" = 5""");
        raw.Execute("BEGIN IMMEDIATE");
        raw.Execute("""DROP TRIGGER "BlockDbGuardInsert" """);
        raw.InsertBlock(TestData.Hash(100), 10, id: 5);
        raw.Execute(guard);
        raw.Execute(string.Create(CultureInfo.InvariantCulture, $"PRAGMA schema_version = {cookie}"));
        raw.Execute("COMMIT");

        // Documented limit: writing the schema cookie back voids the guarantee, as SQLite warns it can corrupt the file
        // (https://www.sqlite.org/pragma.html#pragma_schema_version). What still holds: the check finds the duplicate
        // and the repair merges it, with the blockset entries of both rows kept on the surviving ID.
        var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
        await session.CommitAsync();
        var check = await db.CheckAsync();
        Assert.Equal(raw.DuplicateGroups(), check.DuplicateGroups);
        var repair = await db.RepairAsync();
        Assert.True(repair.After.IsClean, repair.After.ToString());
        Assert.Equal(0, raw.DuplicateGroups());
        Assert.Equal(Math.Min(5, result.Id), await session.FindBlockAsync(TestData.Block(100, 10)));
    }

    /// <summary>
    /// The tampering tests' start: a KeyMap file <paramref name="name"/> committing every write, <paramref name="count"/>
    /// blocks seeded through a session, and a foreign connection to tamper with it; disposed in the reverse order.
    /// </summary>
    private async Task<Seeded> SeededAsync(string name, int count)
    {
        var db = Open(name, o => o.Batching.CommitEvery = 1);
        var session = await db.OpenSessionAsync();
        var ids = await SeedAsync(session, count);
        return new Seeded(db, session, ids, new RawSql(Folder.File(name)));
    }

    private sealed record Seeded(IBlockDatabase Db, IBlockSession Session, long[] Ids, RawSql Raw) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            Raw.Dispose();
            await Session.DisposeAsync();
            await Db.DisposeAsync();
        }
    }
}
