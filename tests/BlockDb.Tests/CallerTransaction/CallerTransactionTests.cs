using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using BlockDb.MicrosoftData;
using BlockDb.Opening;
using Microsoft.Data.Sqlite;
using SQLitePCL;

namespace BlockDb.Tests.CallerTransaction;

/// <summary>
/// BlockDb inside a caller's connection and transaction (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>), held
/// as Duplicati holds its own: one Microsoft.Data.Sqlite connection with <c>Pooling=false</c>, a deferred transaction
/// always open, committed and begun again at the caller's points. BlockDb's rows commit and roll back with the caller's,
/// BlockDb never begins, commits or rolls back (X1), needs the caller's transaction at every call (X2) and opens no
/// connection of its own (X3); every refusal is typed and writes nothing. On real files, TextHash and BlobHash.
/// </summary>
public sealed class CallerTransactionTests : IDisposable
{
    private readonly TempFolder _folder = new();
    private readonly string _path;

    public CallerTransactionTests() => _path = _folder.File("index.db");

    public void Dispose() => _folder.Dispose();

    public static TheoryData<BlockLayout> Layouts => [BlockLayout.TextHash, BlockLayout.BlobHash];

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task The_callers_rows_and_blockdbs_rows_commit_together_and_not_before(BlockLayout layout)
    {
        CreateIndex(layout);
        using var caller = OpenCaller();
        var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, "a.txt");
        await using (var blocks = Build(caller))
        await using (var session = await blocks.OpenSessionAsync())
        {
            var volume = await session.RegisterVolumeAsync("v1");
            var first = await session.SelectXorInsertAsync(TestData.Block(1, 100), volume);
            var second = await session.SelectXorInsertAsync(TestData.Block(2, 50), volume);
            Assert.True(first.Created && second.Created);
            await session.AddBlocksetAsync([first.Id, second.Id], TestData.Hash(100));
            Assert.Equal(0, session.PendingWrites);

            // Nothing is in the file before the caller commits; BlockDb sees the caller's rows and its own.
            Assert.Equal((0, 0), CountFromOutside());
            Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
        }

        Assert.True(InTransaction(caller), "disposing BlockDb ended the caller's transaction");
        transaction.Commit();
        Assert.Equal((2, 1), CountFromOutside());
        Assert.Equal(1, CallerFilesFromOutside());
    }

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task After_the_callers_rollback_nothing_of_blockdbs_is_in_the_file_however_many_writes_it_made(BlockLayout layout)
    {
        CreateIndex(layout);
        using var caller = OpenCaller();
        var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, "a.txt");

        // More writes than the default CommitEvery (1000) and a dispose whose default is to commit: BlockDb commits neither.
        await using (var blocks = Build(caller))
        await using (var session = await blocks.OpenSessionAsync())
        {
            for (var i = 0; i < 1200; i++)
            {
                await session.SelectXorInsertAsync(TestData.Block(i, 1000));
            }

            Assert.Equal((0, 0), CountFromOutside());
        }

        transaction.Rollback();
        Assert.Equal((0, 0), CountFromOutside());
        Assert.Equal(0, CallerFilesFromOutside());
    }

    [Theory]
    [MemberData(nameof(Layouts))]
    public async Task Duplicatis_pattern_of_commit_then_a_new_deferred_transaction_keeps_working_round_after_round(BlockLayout layout)
    {
        await using var started = await StartAsync(layout);
        var (caller, transaction, blocks, session) = started;
        var volume = await session.RegisterVolumeAsync("v1");
        for (var round = 0; round < 4; round++)
        {
            CallerInsert(caller, transaction, $"file{round}");
            var block = await session.SelectXorInsertAsync(TestData.Block(round, 10), volume);
            Assert.True(block.Created);
            Assert.Equal(block.Id, await session.FindBlockAsync(TestData.Block(round, 10)));
            transaction.Commit();
            transaction.Dispose();
            Assert.Equal((round + 1, 0), CountFromOutside());
            transaction = caller.BeginTransaction(deferred: true);
        }

        // The last round's writes go with the caller's last rollback; the committed ones stay.
        await session.SelectXorInsertAsync(TestData.Block(99, 10), volume);
        transaction.Rollback();
        transaction.Dispose();
        Assert.Equal((4, 0), CountFromOutside());
        Assert.Equal(4, CallerFilesFromOutside());
    }

    [Fact]
    public async Task BlockDb_runs_no_statement_that_begins_or_ends_a_transaction_on_the_callers_connection()
    {
        CreateIndex(BlockLayout.TextHash);
        using var caller = OpenCaller();
        using var trace = new StatementTracer(caller);
        var statements = trace.Statements;

        using var transaction = caller.BeginTransaction(deferred: true);
        trace.On = true;
        await using (var blocks = Build(caller))
        {
            await using (var session = await blocks.OpenSessionAsync())
            {
                var volume = await session.RegisterVolumeAsync("v1");
                var ids = new List<long>();
                for (var i = 0; i < 3; i++)
                {
                    ids.Add((await session.SelectXorInsertAsync(TestData.Block(i, 10), volume)).Id);
                }

                await session.AddBlocksetAsync(ids, TestData.Hash(101));
                await Assert.ThrowsAsync<VolumeNotFoundException>(async () => await session.AddBlocksetAsync(new[] { TestData.Block(0, 10), TestData.Block(99, 10) }, new SelectXorInsertResult[2], BlockHash.Parse(TestData.Hash(102)), 999_999));
                await session.SetVolumeStateAsync(volume, VolumeState.Uploaded);
                await session.DeleteUnreferencedBlocksAsync();
            }

            Assert.True((await blocks.CheckAsync()).IsClean);
            await foreach (var _ in blocks.EnumerateBlocksAsync())
            {
            }
        }

        trace.On = false;
        Assert.NotEmpty(statements);
        Assert.Contains(statements, s => s.Contains("BlockDbStep", StringComparison.Ordinal));
        Assert.DoesNotContain(statements, s => TransactionStatements.Classify(s) == TransactionStatements.StatementKind.Transaction);
        transaction.Commit();
        Assert.Equal((3, 1), CountFromOutside());
    }

    public static TheoryData<BlockLayout, SelectXorInsertStrategy> LayoutsAndStrategies() => new()
    {
        { BlockLayout.TextHash, SelectXorInsertStrategy.SelectThenInsert },
        { BlockLayout.TextHash, SelectXorInsertStrategy.InsertOrIgnoreThenSelect },
        { BlockLayout.BlobHash, SelectXorInsertStrategy.SelectThenInsert },
        { BlockLayout.BlobHash, SelectXorInsertStrategy.InsertReturningThenSelect },
    };

    [Theory]
    [MemberData(nameof(LayoutsAndStrategies))]
    public async Task A_single_block_write_opens_no_savepoint_and_a_failed_one_leaves_nothing_in_the_callers_transaction(BlockLayout layout, SelectXorInsertStrategy strategy)
    {
        CreateIndex(layout);
        using var caller = OpenCaller();
        using var trace = new StatementTracer(caller);
        var statements = trace.Statements;

        using var transaction = caller.BeginTransaction(deferred: true);
        await using (var blocks = Build(caller, new BlockDbOptions { SelectXorInsert = strategy }))
        await using (var session = await blocks.OpenSessionAsync())
        {
            var volume = await session.RegisterVolumeAsync("v1");
            trace.On = true;
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 10), volume)).Created);
            await session.SelectXorInsertAsync(TestData.Block(2, 10), volume);
            trace.On = false;
            Assert.NotEmpty(statements);
            Assert.DoesNotContain(statements, s => s.Contains("SAVEPOINT", StringComparison.OrdinalIgnoreCase) || s.TrimStart().StartsWith("RELEASE", StringComparison.OrdinalIgnoreCase));

            // A refused write (a new block for a volume that does not exist) leaves nothing and keeps the caller's transaction.
            var changes = SumChanges(caller);
            await Assert.ThrowsAnyAsync<BlockDbException>(async () => await session.SelectXorInsertAsync(TestData.Block(3, 10), volume + 1000));
            Assert.Equal(changes, SumChanges(caller));
            Assert.True(InTransaction(caller));
            Assert.False((await session.SelectXorInsertAsync(TestData.Block(1, 10), volume)).Created);
        }

        transaction.Commit();
        Assert.Equal((2, 0), CountFromOutside());
    }

    [Fact]
    public async Task Check_counts_and_listings_run_on_the_callers_connection_and_see_its_uncommitted_rows()
    {
        CreateIndex(BlockLayout.BlobHash);
        using var caller = OpenCaller();

        // The caller holds the file exclusively: any connection BlockDb opened of its own would fail (X3).
        Execute(caller, "PRAGMA locking_mode = EXCLUSIVE");
        using var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, "a.txt");
        Assert.ThrowsAny<SqliteException>(() => CountFromOutside());

        await using var blocks = Build(caller);
        Assert.Equal(BlockLayout.BlobHash, blocks.Layout);
        await using (var session = await blocks.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
            await session.SelectXorInsertAsync(TestData.Block(2, 10));
            Assert.Equal(2, (await session.GetCountsAsync()).Blocks);
        }

        var check = await blocks.CheckAsync();
        Assert.True(check.IsClean);
        var listed = new List<long>();
        await foreach (var block in blocks.EnumerateBlocksAsync())
        {
            listed.Add(block.Id);
        }

        Assert.Equal(2, listed.Count);
        Assert.True(InTransaction(caller));
    }

    [Fact]
    public async Task The_sessions_commit_and_rollback_are_refused_because_the_transaction_is_the_callers()
    {
        await using var started = await StartAsync(BlockLayout.TextHash);
        var (caller, transaction, blocks, session) = started;
        await session.SelectXorInsertAsync(TestData.Block(1, 10));

        var commit = await Assert.ThrowsAsync<InvalidOperationException>(async () => await session.CommitAsync());
        Assert.Contains("the transaction is the caller's", commit.Message, StringComparison.Ordinal);
        var rollback = await Assert.ThrowsAsync<InvalidOperationException>(async () => await session.RollbackAsync());
        Assert.Contains("the transaction is the caller's", rollback.Message, StringComparison.Ordinal);

        // Neither ended anything: the block is still in the caller's transaction, and only there.
        Assert.True(InTransaction(caller));
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        Assert.Equal((0, 0), CountFromOutside());
        transaction.Commit();
        Assert.Equal((1, 0), CountFromOutside());
    }

    [Fact]
    public async Task One_session_at_a_time_and_what_commits_on_its_own_is_refused()
    {
        CreateIndex(BlockLayout.TextHash);
        using var caller = OpenCaller();
        using var transaction = caller.BeginTransaction(deferred: true);
        await using var blocks = Build(caller);
        var first = await blocks.OpenSessionAsync();
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await blocks.OpenSessionAsync());
        Assert.Throws<NotSupportedException>(() => blocks.OpenSharedSession());
        await Assert.ThrowsAsync<NotSupportedException>(async () => await blocks.RepairAsync());
        await Assert.ThrowsAsync<NotSupportedException>(async () => await blocks.ImportBlocksAsync(AsyncOf(new ImportBlock(new BlockKey(TestData.Bytes(1), 10)))));

        // The slot comes back when the session is disposed.
        await first.DisposeAsync();
        await using var second = await blocks.OpenSessionAsync();
        await second.SelectXorInsertAsync(TestData.Block(1, 10));
        Assert.Equal(1, SumChanges(caller));
    }

    public static TheoryData<string, string> RefusedSettings => new()
    {
        { "Provider", "BlockDb:Provider" },
        { "OtherFile", "BlockDb:DataSource" },
        { "JournalMode", "BlockDb:Pragmas:JournalMode" },
        { "BusyTimeout", "BlockDb:Pragmas:BusyTimeout" },
        { "CommitEvery", "BlockDb:Batching:CommitEvery" },
        { "CommitAfter", "BlockDb:Batching:CommitAfterMilliseconds" },
        { "ReadsPerTransaction", "BlockDb:Batching:ReadsPerTransaction" },
        { "OnDispose", "BlockDb:Batching:OnDispose" },
        { "GroupCommit", "BlockDb:GroupCommit:MaxBatchSize" },
        { "KeyMap", "BlockDb:Index:Layout" },
        { "ConnectionString", "BlockDb:ConnectionString" },
    };

    [Theory]
    [MemberData(nameof(RefusedSettings))]
    public void A_setting_that_does_not_apply_inside_the_callers_transaction_is_refused_by_key_and_nothing_is_written(string setting, string key)
    {
        CreateIndex(BlockLayout.TextHash);
        var options = new BlockDbOptions();
        switch (setting)
        {
            case "Provider": options.Provider = ProviderCatalog.PInvoke; break;
            case "OtherFile": options.DataSource = _folder.File("other.db"); break;
            case "JournalMode": options.Pragmas.JournalMode = JournalMode.Wal; break;
            case "BusyTimeout": options.Pragmas.BusyTimeout = 10_000; break;
            case "CommitEvery": options.Batching.CommitEvery = 10; break;
            case "CommitAfter": options.Batching.CommitAfterMilliseconds = 100; break;
            case "ReadsPerTransaction": options.Batching.ReadsPerTransaction = 8; break;
            case "OnDispose": options.Batching.OnDispose = DisposeBehavior.Rollback; break;
            case "GroupCommit": options.GroupCommit.MaxBatchSize = 10; break;
            case "KeyMap": options.Index.Layout = BlockLayout.KeyMap; break;
            case "ConnectionString": options.ConnectionString = "Host=x"; break;
        }

        using var caller = OpenCaller();
        using var transaction = caller.BeginTransaction(deferred: true);
        var refused = Assert.Throws<BlockDbConfigurationException>(() => Build(caller, options));
        Assert.Equal(key, refused.Setting);
        Assert.Contains(key, refused.Message, StringComparison.Ordinal);
        Assert.Equal(0, SumChanges(caller));
        Assert.True(InTransaction(caller));
    }

    [Fact]
    public void The_same_file_by_another_path_is_accepted_and_the_files_own_path_is_reported()
    {
        CreateIndex(BlockLayout.TextHash);
        var link = _folder.File("link.db");
        File.CreateSymbolicLink(link, _path);
        using var caller = OpenCaller();
        using var transaction = caller.BeginTransaction(deferred: true);
        using var blocks = Build(caller, new BlockDbOptions { DataSource = link, Provider = ProviderCatalog.MicrosoftData });
        Assert.Equal(Path.GetFullPath(_path), blocks.DataSource);
        Assert.Equal(ProviderCatalog.MicrosoftData, blocks.ProviderName);
    }

    [Fact]
    public void A_KeyMap_file_an_empty_file_an_in_memory_database_and_a_closed_connection_are_refused_typed_and_nothing_is_written()
    {
        CreateIndex(BlockLayout.KeyMap);
        using (var caller = OpenCaller())
        using (var transaction = caller.BeginTransaction(deferred: true))
        {
            var keyMap = Assert.Throws<BlockDbConfigurationException>(() => Build(caller));
            Assert.Equal("BlockDb:Index:Layout", keyMap.Setting);
            Assert.Equal(0, SumChanges(caller));
        }

        var empty = _folder.File("empty.db");
        using (var caller = OpenCaller(empty))
        using (var transaction = caller.BeginTransaction(deferred: true))
        {
            Assert.Throws<BlockDbFormatException>(() => Build(caller));
            Assert.Equal(0, SumChanges(caller));
            Assert.Equal("0", Query(caller, transaction, "SELECT COUNT(*) FROM sqlite_schema"));
        }

        using (var memory = new SqliteConnection("Data Source=:memory:;Pooling=false"))
        {
            memory.Open();
            using var transaction = memory.BeginTransaction(deferred: true);
            var refused = Assert.Throws<BlockDbConfigurationException>(() => Build(memory));
            Assert.Equal("BlockDb:DataSource", refused.Setting);
        }

        using (var closing = OpenCaller())
        {
            var lent = MicrosoftDataDriver.Instance.Borrow(closing);
            closing.Close();
            Assert.Throws<BlockDbConfigurationException>(() => new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(lent).Build());
        }

        using var own = MicrosoftDataDriver.Instance.Open(new SqliteOpenOptions(_path, Drivers.SqliteOpenMode.ReadWrite, 0));
        Assert.Throws<ArgumentException>(() => new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(own));
    }

    [Fact]
    public async Task Without_an_open_transaction_build_and_every_call_are_refused_and_nothing_is_written()
    {
        CreateIndex(BlockLayout.TextHash);
        using var caller = OpenCaller();
        var noTransaction = Assert.Throws<InvalidOperationException>(() => Build(caller));
        Assert.Contains("begin it first", noTransaction.Message, StringComparison.OrdinalIgnoreCase);

        var transaction = caller.BeginTransaction(deferred: true);
        await using var blocks = Build(caller);
        await using var session = await blocks.OpenSessionAsync();
        transaction.Commit();
        transaction.Dispose();

        // Between the caller's commit and its next BEGIN, every call is refused before it writes (X2).
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 10)));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await session.RegisterVolumeAsync("v"));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await session.FindBlockAsync(TestData.Block(1, 10)));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await blocks.CheckAsync());
        Assert.False(InTransaction(caller), "a refused call began a transaction");
        Assert.Equal(0, SumChanges(caller));
        Assert.Equal((0, 0), CountFromOutside());

        // Once the caller begins again, the same session works.
        using var next = caller.BeginTransaction(deferred: true);
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 10))).Created);
        next.Commit();
        Assert.Equal((1, 0), CountFromOutside());
    }

    [Fact]
    public async Task A_second_writer_holding_the_write_lock_makes_a_call_fail_busy_with_its_code_and_write_nothing()
    {
        CreateIndex(BlockLayout.TextHash);
        using var caller = OpenCaller();
        Execute(caller, "PRAGMA busy_timeout = 50");
        var transaction = caller.BeginTransaction(deferred: true);
        await using var blocks = Build(caller);
        await using var session = await blocks.OpenSessionAsync();
        Assert.Equal(0, (await session.GetCountsAsync()).Blocks);

        using (var other = OpenCaller())
        {
            using var held = other.BeginTransaction(deferred: false); // BEGIN IMMEDIATE: the write lock
            CallerInsert(other, held, "other.txt");
            var busy = await Assert.ThrowsAsync<BlockDbException>(async () => await session.SelectXorInsertAsync(TestData.Block(1, 10)));
            Assert.Equal(SqliteResultCode.Busy, busy.SqliteErrorCode);
            Assert.Equal(0, SumChanges(caller));
            held.Commit();
        }

        // SQLite's rule: a deferred transaction that lost the race rolls back and begins again; then it works.
        Assert.True(InTransaction(caller));
        transaction.Rollback();
        transaction.Dispose();
        transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, "mine.txt");
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 10))).Created);
        transaction.Commit();
        transaction.Dispose();
        Assert.Equal((1, 0), CountFromOutside());
        Assert.Equal(2, CallerFilesFromOutside());
    }

    [Fact]
    public async Task A_call_during_which_sqlite_rolls_back_the_callers_transaction_fails_as_rolled_back_and_the_session_goes_on()
    {
        await using var started = await StartAsync(BlockLayout.TextHash);
        var (caller, transaction, blocks, session) = started;
        CallerInsert(caller, transaction, "a.txt");
        await session.SelectXorInsertAsync(TestData.Block(1, 10));

        // The caller's own trigger ends its transaction inside BlockDb's next insert, as SQLITE_FULL or IOERR would.
        Execute(caller, """CREATE TEMP TRIGGER "EndIt" BEFORE INSERT ON main."Block" WHEN NEW."Size" = 666 BEGIN SELECT RAISE(ROLLBACK, 'ended by the engine'); END""", transaction);
        var lost = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await session.SelectXorInsertAsync(TestData.Block(2, 666)));
        Assert.Contains("caller's transaction", lost.Message, StringComparison.Ordinal);
        Assert.Equal(SqliteResultCode.Constraint, lost.SqliteErrorCode);
        Assert.False(InTransaction(caller));
        transaction.Dispose();

        // Everything since the caller's last commit is gone, and the session works in the caller's next transaction.
        Assert.Equal((0, 0), CountFromOutside());
        using var next = caller.BeginTransaction(deferred: true);
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 10))).Created);
        next.Commit();
        Assert.Equal((1, 0), CountFromOutside());
        Assert.Equal(0, CallerFilesFromOutside());
    }

    [Fact]
    public async Task A_failed_call_leaves_nothing_of_itself_in_the_callers_transaction()
    {
        await using var started = await StartAsync(BlockLayout.TextHash);
        var (caller, transaction, blocks, session) = started;
        var kept = await session.SelectXorInsertAsync(TestData.Block(1, 10));

        // A span whose last block is refused by the engine: the blocks before it in the same call are undone with it.
        Execute(caller, """CREATE TEMP TRIGGER "RefuseIt" BEFORE INSERT ON main."Block" WHEN NEW."Size" = 666 BEGIN SELECT RAISE(ABORT, 'refused'); END""", transaction);
        BlockKey[] span = [TestData.Block(2, 10), TestData.Block(3, 10), TestData.Block(4, 666)];
        var results = new SelectXorInsertResult[3];
        await Assert.ThrowsAsync<BlockDbException>(async () => await session.SelectXorInsertManyAsync(span, results));
        Assert.True(InTransaction(caller));
        Assert.Equal(1, (await session.GetCountsAsync()).Blocks);
        transaction.Commit();
        Assert.Equal((1, 0), CountFromOutside());
        Assert.True(kept.Created);
    }

    [Fact]
    public async Task When_the_caller_closes_its_connection_first_the_next_call_throws_ObjectDisposedException()
    {
        CreateIndex(BlockLayout.TextHash);
        var caller = OpenCaller();
        var transaction = caller.BeginTransaction(deferred: true);
        var blocks = Build(caller);
        var session = await blocks.OpenSessionAsync();
        await session.SelectXorInsertAsync(TestData.Block(1, 10));
        transaction.Commit();
        transaction.Dispose();

        caller.Close(); // does not throw: BlockDb's statements are finalized inside the caller's close
        caller.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await session.SelectXorInsertAsync(TestData.Block(2, 10)));
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await session.FindBlockAsync(TestData.Block(1, 10)));

        // Disposing BlockDb afterwards throws nothing; the committed block is in the file and the file is free.
        await session.DisposeAsync();
        await blocks.DisposeAsync();
        Assert.Equal((1, 0), CountFromOutside());
        File.Delete(_path);
    }

    /// <summary>
    /// Duplicati's set-up: a new index of <paramref name="layout"/>, the caller's connection with a deferred transaction
    /// open, BlockDb built on it and a session opened; disposed in the reverse order.
    /// </summary>
    private async Task<Started> StartAsync(BlockLayout layout)
    {
        CreateIndex(layout);
        var caller = OpenCaller();
        var transaction = caller.BeginTransaction(deferred: true);
        var blocks = Build(caller);
        return new Started(caller, transaction, blocks, await blocks.OpenSessionAsync());
    }

    private sealed record Started(SqliteConnection Caller, SqliteTransaction Transaction, IBlockDatabase Blocks, IBlockSession Session) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            await Session.DisposeAsync();
            await Blocks.DisposeAsync();
            Transaction.Dispose();
            Caller.Dispose();
        }
    }

    /// <summary>Creates a BlockDb index of <paramref name="layout"/> at <see cref="_path"/> (as an application would once) and the caller's own table beside it.</summary>
    private void CreateIndex(BlockLayout layout)
    {
        using (var db = new BlockDatabaseBuilder(new BlockDbOptions { DataSource = _path, Index = { Layout = layout } }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build())
        {
        }

        using var caller = OpenCaller();
        Execute(caller, """CREATE TABLE "CallerFile" ("ID" INTEGER PRIMARY KEY, "Path" TEXT NOT NULL)""");
    }

    private SqliteConnection OpenCaller(string? path = null)
    {
        var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path ?? _path, Pooling = false, DefaultTimeout = 2 }.ToString());
        connection.Open();
        return connection;
    }

    private static IBlockDatabase Build(SqliteConnection caller, BlockDbOptions? options = null) =>
        new BlockDatabaseBuilder(options ?? new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(caller)).Build();

    private static void CallerInsert(SqliteConnection caller, SqliteTransaction transaction, string path)
    {
        using var insert = caller.CreateCommand();
        insert.Transaction = transaction;
        insert.CommandText = """INSERT INTO "CallerFile" ("Path") VALUES ($path)""";
        insert.Parameters.AddWithValue("$path", path);
        Assert.Equal(1, insert.ExecuteNonQuery());
    }

    private static void Execute(SqliteConnection connection, string sql, SqliteTransaction? transaction = null)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    private static string? Query(SqliteConnection connection, SqliteTransaction? transaction, string sql)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        return Convert.ToString(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>Rows changed through the caller's connection since it opened (<c>total_changes()</c>), BlockDb's included.</summary>
    private static long SumChanges(SqliteConnection caller) => raw.sqlite3_total_changes(caller.Handle!);

    private static bool InTransaction(SqliteConnection caller) => raw.sqlite3_get_autocommit(caller.Handle!) == 0;

    /// <summary>(blocks, blocksets) as another connection sees the file: what is committed.</summary>
    private (long Blocks, long Blocksets) CountFromOutside()
    {
        using var outside = OpenCaller();
        return (long.Parse(Query(outside, null, """SELECT COUNT(*) FROM "Block" """)!, System.Globalization.CultureInfo.InvariantCulture),
            long.Parse(Query(outside, null, """SELECT COUNT(*) FROM "Blockset" """)!, System.Globalization.CultureInfo.InvariantCulture));
    }

    private long CallerFilesFromOutside()
    {
        using var outside = OpenCaller();
        return long.Parse(Query(outside, null, """SELECT COUNT(*) FROM "CallerFile" """)!, System.Globalization.CultureInfo.InvariantCulture);
    }

    private static async IAsyncEnumerable<T> AsyncOf<T>(params T[] items)
    {
        foreach (var item in items)
        {
            yield return item;
        }

        await Task.CompletedTask;
    }
}
