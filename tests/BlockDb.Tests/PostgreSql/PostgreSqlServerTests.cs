using System.Globalization;
using Npgsql;

namespace BlockDb.Tests.PostgreSql;

/// <summary>What only a server has: many writer processes at once, a connection lost mid-batch, a statement timeout, the schema on a shared server, bulk import by COPY.</summary>
public sealed class PostgreSqlServerTests : PostgreSqlSchemaTestBase
{
    [PostgresFact]
    public async Task Sixteen_writer_processes_over_overlapping_blocks_store_each_block_once_and_agree_on_its_id()
    {
        await using (var db = Open())
        {
            // The schema exists before the writers start, as it would on a running server.
        }

        var writers = Enumerable.Range(0, 16).Select(p => new ChildProcess("pg-xor", ConnectionString, p.ToString(CultureInfo.InvariantCulture), "400")).ToList();
        try
        {
            foreach (var writer in writers)
            {
                Assert.Equal(0, await writer.WaitForExitAsync(TimeSpan.FromMinutes(3)));
            }

            var seen = writers.SelectMany(w => w.Lines).Where(l => l.StartsWith("XOR ", StringComparison.Ordinal))
                .Select(l => l.Split(' ')).Select(f => (Key: int.Parse(f[1], CultureInfo.InvariantCulture), Id: long.Parse(f[2], CultureInfo.InvariantCulture))).ToList();
            Assert.Equal(16 * 400, seen.Count);
            var idsPerKey = seen.GroupBy(x => x.Key).ToDictionary(g => g.Key, g => g.Select(x => x.Id).Distinct().ToList());
            Assert.All(idsPerKey.Values, ids => Assert.Single(ids));
            Assert.Equal(idsPerKey.Count, idsPerKey.Values.Select(ids => ids[0]).Distinct().Count());

            await using var check = Open();
            await using var session = await check.OpenSessionAsync();
            Assert.Equal(idsPerKey.Count, (await session.GetCountsAsync()).Blocks);
            foreach (var (key, ids) in idsPerKey)
            {
                Assert.Equal(ids[0], await session.FindBlockAsync(TestData.Block(key, 4096)));
            }

            Assert.True((await check.CheckAsync()).IsClean);
        }
        finally
        {
            writers.ForEach(w => w.Dispose());
        }
    }

    [PostgresFact]
    public async Task A_connection_lost_mid_batch_gives_a_typed_rolled_back_batch_and_keeps_what_was_committed()
    {
        var victim = "blockdb-victim-" + Guid.NewGuid().ToString("N");
        await using var db = Open(o => o.Batching.CommitEvery = 0, new NpgsqlConnectionStringBuilder(ConnectionString) { ApplicationName = victim }.ConnectionString);
        await using var session = await db.OpenSessionAsync();
        for (var i = 0; i < 10; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, 10));
        }

        await session.CommitAsync();
        for (var i = 10; i < 15; i++)
        {
            await session.SelectXorInsertAsync(TestData.Block(i, 10));
        }

        Assert.Equal(5, session.PendingWrites);
        PostgreSqlServer.Execute(PostgreSqlServer.ConnectionString!, $"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{victim}'");

        var e = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.SelectXorInsertAsync(TestData.Block(99, 10)));
        Assert.Equal(5, e.LostWrites);
        Assert.NotNull(e.SqlState);
        Assert.True(e.SqlState is "57P01" || e.SqlState.StartsWith("08", StringComparison.Ordinal), e.SqlState);
        Assert.Null(e.SqliteErrorCode);
        Assert.Equal(0, session.PendingWrites);

        // The session goes on, on a new connection; the committed batch is intact and the lost one is gone.
        Assert.Equal(10, (await session.GetCountsAsync()).Blocks);
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(12, 10))).Created);
        Assert.False((await session.SelectXorInsertAsync(TestData.Block(3, 10))).Created);
    }

    [PostgresFact]
    public async Task A_session_disposed_while_its_call_awaits_the_server_waits_for_the_call_on_the_thread_that_started_it()
    {
        await using var db = Open(o =>
        {
            o.Batching.CommitEvery = 0;
            o.Batching.OnDispose = DisposeBehavior.Commit;
        });
        await using var holder = await db.OpenSessionAsync();
        var held = await holder.SelectXorInsertAsync(TestData.Block(1, 10)); // uncommitted: its index entry is locked
        var session = await db.OpenSessionAsync();

        // The call waits on the server for the holder's row, so the thread that started it is free: disposing from it
        // is not a dispose from inside the call (which SQLite's synchronous calls refuse) and must wait for the call.
        var call = session.SelectXorInsertAsync(TestData.Block(1, 10)).AsTask();
        Assert.False(call.IsCompleted);
        var disposing = session.DisposeAsync().AsTask();
        await Task.Delay(200);
        Assert.False(disposing.IsCompleted);

        await holder.CommitAsync();
        Assert.Equal(new SelectXorInsertResult(held.Id, false), await call);
        await disposing.WaitAsync(TimeSpan.FromSeconds(30));
    }

    [PostgresFact]
    public async Task A_statement_timeout_gives_sqlstate_57014_and_the_batch_it_ended()
    {
        await using var holder = Open(o => o.Batching.CommitEvery = 0);
        await using var holding = await holder.OpenSessionAsync();
        await holding.SelectXorInsertAsync(TestData.Block(1, 10)); // uncommitted: its index entry is locked

        var timed = new NpgsqlConnectionStringBuilder(ConnectionString) { Options = "-c statement_timeout=300" }.ConnectionString;
        await using var db = Open(o => o.Batching.CommitEvery = 0, timed);
        await using var session = await db.OpenSessionAsync();

        // Nothing pending: the statement fails on its own.
        var alone = await Assert.ThrowsAsync<BlockDbException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 10)));
        Assert.Equal("57014", alone.SqlState);
        Assert.Null(alone.SqliteErrorCode);

        // With a write pending, the server aborted the transaction: the batch is reported lost.
        await session.SelectXorInsertAsync(TestData.Block(2, 10));
        var batch = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 10)));
        Assert.Equal("57014", batch.SqlState);
        Assert.Equal(1, batch.LostWrites);

        await holding.CommitAsync();
        Assert.False((await session.SelectXorInsertAsync(TestData.Block(1, 10))).Created);
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
    }

    [PostgresFact]
    public async Task The_schema_is_created_once_with_its_version_and_reported_as_a_server()
    {
        await using var db = Open();
        Assert.Equal("PostgreSQL", db.Engine);
        Assert.Null(db as ISqliteBlockDatabase); // no pragmas, no key map, no page cache of BlockDb's
        Assert.Matches(@"^\d+\.\d+", db.EngineVersion);
        Assert.Equal(BlockLayout.BlobHash, db.Layout);
        Assert.DoesNotContain("Password", db.DataSource, StringComparison.OrdinalIgnoreCase);
        await using var connection = new NpgsqlConnection(ConnectionString);
        await connection.OpenAsync();
        await using var settings = new NpgsqlCommand("""SELECT string_agg("Name" || '=' || "Value", ',' ORDER BY "Name") FROM "BlockDbSettings" """, connection);
        Assert.Equal("Application=BlockDb,BlockLayout=BlobHash,SchemaVersion=1", await settings.ExecuteScalarAsync());
        await using var index = new NpgsqlCommand("""SELECT indisunique FROM pg_index WHERE indexrelid = to_regclass('"BlockHashSize"')""", connection);
        Assert.Equal(true, await index.ExecuteScalarAsync());
    }

    [PostgresFact]
    public void Another_applications_tables_and_a_newer_schema_are_refused_and_left_untouched()
    {
        PostgreSqlServer.Execute(ConnectionString, """CREATE TABLE "Block" ("ID" integer PRIMARY KEY, "Hash" text NOT NULL)""");
        var foreign = Assert.Throws<BlockDbFormatException>(() => Open());
        Assert.Contains("another application", foreign.Message, StringComparison.Ordinal);
        PostgreSqlServer.Execute(ConnectionString, """DROP TABLE "Block" """);

        using (Open())
        {
        }

        PostgreSqlServer.Execute(ConnectionString, """UPDATE "BlockDbSettings" SET "Value" = '2' WHERE "Name" = 'SchemaVersion'""");
        var newer = Assert.Throws<BlockDbFormatException>(() => Open());
        Assert.Contains("newer", newer.Message, StringComparison.Ordinal);
    }

    [PostgresFact]
    public async Task Bulk_import_by_copy_inserts_the_new_blocks_once_and_all_or_nothing()
    {
        await using var db = Open();
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(0, 4096));
        }

        // One transaction for the whole input, so a bad block leaves nothing of it.
        var whole = new ImportOptions { ItemsPerTransaction = ImportOptions.MaxItemsPerTransaction };
        var blocks = Enumerable.Range(0, 5000).Select(i => new ImportBlock(new BlockKey(TestData.Bytes(i % 4000), 4096))).ToList();
        Assert.Equal(3999, (await db.ImportBlocksAsync(blocks.ToAsyncEnumerable(), whole)).Created);
        var bad = blocks.Append(new ImportBlock(default)).Prepend(new ImportBlock(new BlockKey(TestData.Bytes(-1), 1)));
        await Assert.ThrowsAsync<ArgumentException>(async () => await db.ImportBlocksAsync(bad.ToAsyncEnumerable(), whole));

        await using var check = await db.OpenSessionAsync();
        Assert.Equal(4000, (await check.GetCountsAsync()).Blocks);
        Assert.Equal(1, await check.FindBlockAsync(TestData.Block(0, 4096)));
        Assert.Null(await check.FindBlockAsync(TestData.Block(-1, 1)));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [PostgresFact]
    public async Task Check_finds_and_repair_merges_duplicates_written_around_a_dropped_index()
    {
        await using var db = Open();
        long blockset;
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
            blockset = await session.AddBlocksetAsync(new[] { TestData.Block(1, 10) });
        }

        PostgreSqlServer.Execute(ConnectionString, """
            DROP INDEX "BlockHashSize";
            INSERT INTO "Block" ("Hash", "Size") SELECT "Hash", "Size" FROM "Block";
            UPDATE "BlocksetEntry" SET "BlockID" = 2;
            """);
        var found = await db.CheckAsync();
        Assert.Equal(1, found.DuplicateGroups);
        Assert.Equal([2L], found.Duplicates.FirstIds);
        Assert.NotEqual("ok", found.IntegrityCheck);

        var repaired = await db.RepairAsync();
        Assert.Equal(1, repaired.MergedGroups);
        Assert.Equal(1, repaired.DeletedBlocks);
        Assert.Equal(1, repaired.RepointedEntries);
        Assert.Equal(0, repaired.After.DuplicateGroups);
        await using var check = await db.OpenSessionAsync();
        Assert.Equal(1, (await check.ListBlocksetBlocksAsync(blockset))[0].BlockId);
    }
}
