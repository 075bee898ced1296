using BlockDb.Drivers;
using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.CallerTransaction;

/// <summary>
/// A caller's Microsoft.Data.Sqlite connection lent to BlockDb (<see cref="MicrosoftDataDriver.Borrow"/>): BlockDb's raw
/// statements run inside the caller's transaction, commit and roll back with it, leave the caller's commands and
/// transactions working, never begin or end a transaction themselves (X1), and fail cleanly once the caller has closed.
/// Duplicati's way of holding the connection: <c>Pooling=false</c>, a deferred transaction always open, committed and
/// begun again at its checkpoints, every command carrying the current transaction.
/// </summary>
public sealed class BorrowedConnectionTests : IDisposable
{
    private static readonly SqlStatement Insert = new("InsertItem", """INSERT INTO "Item" ("Key", "Value") VALUES (@Key, @Value)""", "@Key", "@Value");
    private static readonly SqlStatement Find = new("FindItem", """SELECT "Value" FROM "Item" WHERE "Key" = @Key""", "@Key");

    private readonly TempFolder _folder = new();
    private readonly string _path;

    public BorrowedConnectionTests()
    {
        _path = _folder.File("caller.db");
        using var setup = Open();
        using var create = setup.CreateCommand();
        create.CommandText = """CREATE TABLE "Item" ("Key" INTEGER NOT NULL UNIQUE, "Value" TEXT); PRAGMA journal_mode=WAL""";
        create.ExecuteNonQuery();
    }

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void Raw_statements_run_in_the_callers_transaction_and_vanish_with_its_rollback()
    {
        using var caller = Open();
        using var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, 1, "caller");
        using (var blocks = MicrosoftDataDriver.Instance.Borrow(caller))
        using (var insert = blocks.Prepare(Insert))
        using (var find = blocks.Prepare(Find))
        {
            Assert.True(blocks.InTransaction);
            Run(insert, 2, "blockdb");

            // BlockDb sees the caller's uncommitted row, and the caller sees BlockDb's.
            Assert.Equal("caller", FindValue(find, 1));
            Assert.Equal("blockdb", CallerValue(caller, transaction, 2));
            Assert.Equal(0, CountFromOutside());
        }

        transaction.Rollback();
        Assert.Equal(0, CountFromOutside());
        Assert.Null(CallerValue(caller, null, 2));
    }

    [Fact]
    public void Raw_statements_become_durable_with_the_callers_commit_and_not_before()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        using var insert = blocks.Prepare(Insert);
        using (var transaction = caller.BeginTransaction(deferred: true))
        {
            Run(insert, 1, "blockdb");
            CallerInsert(caller, transaction, 2, "caller");
            Assert.Equal(0, CountFromOutside());
            transaction.Commit();
        }

        Assert.False(blocks.InTransaction);
        Assert.Equal(2, CountFromOutside());
    }

    [Fact]
    public void The_callers_prepared_commands_and_transactions_keep_working_across_its_commits_and_new_transactions()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        using var insert = blocks.Prepare(Insert);
        using var find = blocks.Prepare(Find);

        // Duplicati's pattern: one prepared command, given the current transaction before each use; commit and begin again.
        using var callerInsert = caller.CreateCommand();
        callerInsert.CommandText = """INSERT INTO "Item" ("Key", "Value") VALUES ($key, $value)""";
        var key = callerInsert.Parameters.Add("$key", SqliteType.Integer);
        var value = callerInsert.Parameters.Add("$value", SqliteType.Text);
        callerInsert.Prepare();

        var transaction = caller.BeginTransaction(deferred: true);
        for (var round = 0; round < 3; round++)
        {
            callerInsert.Transaction = transaction;
            key.Value = 100 + round;
            value.Value = "caller";
            Assert.Equal(1, callerInsert.ExecuteNonQuery());
            Run(insert, 200 + round, "blockdb");
            Assert.Equal("caller", FindValue(find, 100 + round));
            key.Value = 300 + round;
            Assert.Equal(1, callerInsert.ExecuteNonQuery());

            transaction.Commit();
            transaction.Dispose();
            Assert.Equal(3 * (round + 1), CountFromOutside());
            transaction = caller.BeginTransaction(deferred: true);
            Assert.True(blocks.InTransaction);
        }

        transaction.Rollback();
        transaction.Dispose();
        Assert.Equal(9, CountFromOutside());
    }

    [Theory]
    [InlineData("BEGIN")]
    [InlineData("begin immediate")]
    [InlineData("COMMIT")]
    [InlineData("  /* end */ END TRANSACTION")]
    [InlineData("-- a comment\nRollback")]
    [InlineData("ROLLBACK TRANSACTION")]
    public void A_statement_that_begins_or_ends_a_transaction_is_refused_and_the_callers_transaction_stays_open(string sql)
    {
        using var caller = Open();
        using var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, 1, "caller");
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);

        Assert.Throws<InvalidOperationException>(() => blocks.Execute(sql));
        Assert.Throws<InvalidOperationException>(() => blocks.QueryText(sql));
        Assert.Throws<InvalidOperationException>(() => blocks.Prepare(new SqlStatement("Refused", sql)));

        // A refused statement after an allowed one in the same text: the transaction statement never runs.
        Assert.Throws<InvalidOperationException>(() => blocks.Execute("""INSERT INTO "Item" ("Key", "Value") VALUES (2, 'x'); """ + sql));

        Assert.True(blocks.InTransaction);
        Assert.Equal("caller", CallerValue(caller, transaction, 1));
        transaction.Commit();
        Assert.Equal(2, CountFromOutside());
    }

    [Fact]
    public void A_savepoint_makes_a_step_atomic_inside_the_callers_transaction_and_is_refused_outside_it()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        using var insert = blocks.Prepare(Insert);
        using var savepoint = blocks.Prepare(new SqlStatement("Savepoint", """SAVEPOINT "BlockDbStep" """));
        using var undo = blocks.Prepare(new SqlStatement("RollbackTo", """ROLLBACK TO "BlockDbStep" """));
        using var release = blocks.Prepare(new SqlStatement("Release", """RELEASE "BlockDbStep" """));

        // No caller transaction: a savepoint would begin one, so it is refused (prepared or as text).
        Assert.False(blocks.InTransaction);
        Assert.Throws<InvalidOperationException>(() => savepoint.ExecuteNonQuery());
        Assert.Throws<InvalidOperationException>(() => blocks.Execute("""SAVEPOINT "BlockDbStep" """));
        Assert.False(blocks.InTransaction);

        using var transaction = caller.BeginTransaction(deferred: true);
        CallerInsert(caller, transaction, 1, "caller");

        // A step that fails half-way is undone to its savepoint; the caller's row and BlockDb's earlier step stay.
        savepoint.ExecuteNonQuery();
        Run(insert, 2, "kept");
        release.ExecuteNonQuery();
        savepoint.ExecuteNonQuery();
        Run(insert, 3, "undone");
        var duplicate = Assert.Throws<BlockDbException>(() => Run(insert, 1, "duplicate"));
        Assert.Equal(SqliteResultCode.ConstraintUnique, duplicate.SqliteExtendedErrorCode);
        undo.ExecuteNonQuery();
        release.ExecuteNonQuery();

        Assert.True(blocks.InTransaction);
        transaction.Commit();
        Assert.Equal(2, CountFromOutside());
        using var outside = Open();
        Assert.Equal("kept", CallerValue(outside, null, 2));
        Assert.Null(CallerValue(outside, null, 3));
    }

    [Fact]
    public void A_borrowed_connection_without_a_transaction_reports_none_and_its_statements_autocommit()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        Assert.False(blocks.InTransaction);
        using var insert = blocks.Prepare(Insert);
        Run(insert, 1, "autocommit");
        Assert.False(blocks.InTransaction);
        Assert.Equal(1, CountFromOutside());
        using var transaction = caller.BeginTransaction();
        Assert.True(blocks.InTransaction);
    }

    [Fact]
    public void A_failure_keeps_sqlites_primary_and_extended_result_codes_and_the_statement_runs_again()
    {
        using var caller = Open();
        using var transaction = caller.BeginTransaction(deferred: true);
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        using var insert = blocks.Prepare(Insert);
        Run(insert, 1, "a");
        var unique = Assert.Throws<BlockDbException>(() => Run(insert, 1, "b"));
        Assert.Equal(SqliteResultCode.Constraint, unique.SqliteErrorCode);
        Assert.Equal(SqliteResultCode.ConstraintUnique, unique.SqliteExtendedErrorCode);
        Run(insert, 2, "c");

        var missing = Assert.Throws<BlockDbException>(() => blocks.Execute("""INSERT INTO "Missing" VALUES (1)"""));
        Assert.Equal(SqliteResultCode.Error, missing.SqliteErrorCode);
        var syntax = Assert.Throws<BlockDbException>(() => blocks.Prepare(new SqlStatement("Bad", "SELEC 1")));
        Assert.Equal(SqliteResultCode.Error, syntax.SqliteErrorCode);

        // A failed statement rolls back only itself: the caller's transaction and both good rows remain.
        Assert.True(blocks.InTransaction);
        transaction.Commit();
        Assert.Equal(2, CountFromOutside());
    }

    [Fact]
    public void Text_and_blobs_round_trip_including_empty_values_and_null()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        blocks.Execute("""CREATE TABLE "Value" ("ID" INTEGER PRIMARY KEY, "Text" TEXT, "Blob" BLOB)""");
        using var insert = blocks.Prepare(new SqlStatement("InsertValue", """INSERT INTO "Value" ("ID", "Text", "Blob") VALUES (@ID, @Text, @Blob)""", "@ID", "@Text", "@Blob"));
        using var read = blocks.Prepare(new SqlStatement("ReadValue", """SELECT "Text", "Blob", typeof("Text"), typeof("Blob") FROM "Value" WHERE "ID" = @ID""", "@ID"));
        var longText = new string('é', 2000);
        (long Id, string? Text, byte[]? Blob)[] rows = [(1, "", []), (2, null, null), (3, longText, [1, 2, 3]), (4, "AAAA+/==", new byte[5000])];
        foreach (var (id, text, blob) in rows)
        {
            insert.BindInt64(1, id);
            if (text is null) insert.BindNull(2); else insert.BindText(2, text);
            if (blob is null) insert.BindNull(3); else insert.BindBlob(3, blob);
            Assert.Equal(1, insert.ExecuteNonQuery());
        }

        foreach (var (id, text, blob) in rows)
        {
            read.BindInt64(1, id);
            Assert.True(read.Step());
            Assert.Equal(text, read.ColumnText(0));
            Assert.Equal(text is null ? "null" : "text", read.ColumnText(2));
            Assert.Equal(blob is null ? "null" : "blob", read.ColumnText(3));
            var buffer = new byte[6000];
            var length = read.ColumnBlob(1, buffer);
            Assert.Equal(blob?.Length ?? -1, length);
            read.Reset();
        }
    }

    [Fact]
    public void Reals_round_trip_bit_for_bit_including_infinities()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        blocks.Execute("""CREATE TABLE "Real" ("ID" INTEGER PRIMARY KEY, "Value" REAL)""");
        using var insert = blocks.Prepare(new SqlStatement("InsertReal", """INSERT INTO "Real" ("ID", "Value") VALUES (@ID, @Value)""", "@ID", "@Value"));
        using var read = blocks.Prepare(new SqlStatement("ReadReal", """SELECT "Value", typeof("Value") FROM "Real" WHERE "ID" = @ID""", "@ID"));
        double[] values = [0.1, -2.5e-300, double.MaxValue, double.Epsilon, double.PositiveInfinity, double.NegativeInfinity];
        for (var i = 0; i < values.Length; i++)
        {
            insert.BindInt64(1, i);
            insert.BindDouble(2, values[i]);
            Assert.Equal(1, insert.ExecuteNonQuery());
        }

        for (var i = 0; i < values.Length; i++)
        {
            read.BindInt64(1, i);
            Assert.True(read.Step());
            Assert.Equal(BitConverter.DoubleToInt64Bits(values[i]), BitConverter.DoubleToInt64Bits(read.ColumnDouble(0)));
            Assert.Equal("real", read.ColumnText(1));
            read.Reset();
        }
    }

    [Fact]
    public void The_file_name_is_the_callers_file_and_empty_in_memory()
    {
        using var caller = Open();
        using var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        Assert.Equal(Path.GetFullPath(_path), blocks.FileName);

        using var memory = new SqliteConnection("Data Source=:memory:");
        memory.Open();
        using var inMemory = MicrosoftDataDriver.Instance.Borrow(memory);
        Assert.Equal(string.Empty, inMemory.FileName);
    }

    [Fact]
    public void Disposing_the_borrowed_connection_finalizes_only_its_statements_and_leaves_the_callers_connection_open()
    {
        using var caller = Open();
        using var transaction = caller.BeginTransaction(deferred: true);
        var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        var insert = blocks.Prepare(Insert);
        Run(insert, 1, "blockdb");
        blocks.Dispose();

        Assert.Throws<ObjectDisposedException>(() => insert.Step());
        Assert.Throws<ObjectDisposedException>(() => blocks.Execute("SELECT 1"));
        Assert.Equal(System.Data.ConnectionState.Open, caller.State);
        Assert.Equal("blockdb", CallerValue(caller, transaction, 1));
        transaction.Commit();
        Assert.Equal(1, CountFromOutside());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void When_the_caller_closes_first_later_calls_throw_ObjectDisposedException_and_the_file_is_released_at_its_close(bool pooling)
    {
        var caller = Open(pooling);
        var transaction = caller.BeginTransaction(deferred: true);
        var blocks = MicrosoftDataDriver.Instance.Borrow(caller);
        var insert = blocks.Prepare(Insert);
        var find = blocks.Prepare(Find);
        Run(insert, 1, "blockdb");
        find.BindInt64(1, 1);
        Assert.True(find.Step()); // left mid-read on purpose

        caller.Close();
        if (!pooling)
        {
            // sqlite3_close_v2 would leave a zombie handle (and the file open) until BlockDb finalized its statements.
            Assert.Equal(0, ProcessFiles.Descriptors(_path));
        }

        Assert.Throws<ObjectDisposedException>(() => insert.BindInt64(1, 2));
        Assert.Throws<ObjectDisposedException>(() => insert.ExecuteNonQuery());
        Assert.Throws<ObjectDisposedException>(() => find.ColumnText(0));
        Assert.Throws<ObjectDisposedException>(() => blocks.Execute("SELECT 1"));
        Assert.Throws<ObjectDisposedException>(() => blocks.Prepare(Find));
        Assert.Throws<ObjectDisposedException>(() => _ = blocks.InTransaction);
        blocks.Dispose();
        insert.Dispose();
        transaction.Dispose();
        caller.Dispose();
        SqliteConnection.ClearAllPools();

        // The close rolled the caller's transaction back, BlockDb's row with it.
        Assert.Equal(0, CountFromOutside());
        Assert.Equal(0, ProcessFiles.Descriptors(_path));
    }

    [Fact]
    public void Borrowing_a_closed_connection_is_refused()
    {
        using var caller = new SqliteConnection($"Data Source={_path};Pooling=false");
        Assert.Throws<InvalidOperationException>(() => MicrosoftDataDriver.Instance.Borrow(caller));
        Assert.Throws<ArgumentNullException>(() => MicrosoftDataDriver.Instance.Borrow(null!));
    }

    private SqliteConnection Open(bool pooling = false)
    {
        var connection = new SqliteConnection($"Data Source={_path};Pooling={pooling}");
        connection.Open();
        using var busy = connection.CreateCommand();
        busy.CommandText = "PRAGMA busy_timeout=10000";
        busy.ExecuteNonQuery();
        return connection;
    }

    private long CountFromOutside()
    {
        using var outside = Open();
        using var count = outside.CreateCommand();
        count.CommandText = """SELECT COUNT(*) FROM "Item" """;
        return (long)count.ExecuteScalar()!;
    }

    private static void CallerInsert(SqliteConnection caller, SqliteTransaction transaction, long key, string value)
    {
        using var command = caller.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """INSERT INTO "Item" ("Key", "Value") VALUES ($key, $value)""";
        command.Parameters.AddWithValue("$key", key);
        command.Parameters.AddWithValue("$value", value);
        Assert.Equal(1, command.ExecuteNonQuery());
    }

    private static string? CallerValue(SqliteConnection caller, SqliteTransaction? transaction, long key)
    {
        using var command = caller.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """SELECT "Value" FROM "Item" WHERE "Key" = $key""";
        command.Parameters.AddWithValue("$key", key);
        return command.ExecuteScalar() as string;
    }

    private static void Run(ISqliteStatement insert, long key, string value)
    {
        insert.BindInt64(1, key);
        insert.BindText(2, value);
        Assert.Equal(1, insert.ExecuteNonQuery());
    }

    private static string? FindValue(ISqliteStatement find, long key)
    {
        find.BindInt64(1, key);
        try
        {
            return find.Step() ? find.ColumnText(0) : null;
        }
        finally
        {
            find.Reset();
        }
    }
}
