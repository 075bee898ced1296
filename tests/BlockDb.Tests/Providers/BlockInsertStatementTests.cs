using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// A driver's one-call block insert (<see cref="IBlockInsertStatement"/>, the bulk import's and the KeyMap insert's per-row call on PInvoke and MicrosoftData)
/// writes exactly the row the four binds and <see cref="ISqliteStatement.ExecuteNonQuery"/> write, keeps SQLite's result
/// codes on failure with the statement ready to run again, and refuses misuse (a busy or disposed statement) before
/// SQLite sees the call, as the bind-by-bind path does.
/// </summary>
public sealed class BlockInsertStatementTests : IDisposable
{
    private static readonly SqlStatement Insert = new("InsertBlockWithId", """INSERT INTO "Block" ("ID", "Hash", "Size", "VolumeID") VALUES (@ID, @Hash, @Size, @VolumeID)""", "@ID", "@Hash", "@Size", "@VolumeID");

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(ProviderCatalog.PInvoke)]
    [InlineData(ProviderCatalog.MicrosoftData)]
    public void The_one_call_insert_writes_the_row_the_binds_write_and_keeps_result_codes(string provider)
    {
        using var connection = OpenBlocks(provider);
        using var statement = connection.Prepare(Insert);
        var insert = Assert.IsAssignableFrom<IBlockInsertStatement>(statement);
        byte[] hash = [1, 2, 3, 0, 255, 7, 8];
        insert.InsertBlock(1, hash, 4096, null);
        insert.InsertBlock(2, hash.AsSpan(0, 3), 10, 42);
        statement.BindInt64(1, 3);
        statement.BindBlob(2, hash);
        statement.BindInt64(3, 4096);
        statement.BindNull(4);
        Assert.Equal(1, statement.ExecuteNonQuery());
        Assert.Equal(
            "1|01020300FF0708|4096|NULL;2|010203|10|42;3|01020300FF0708|4096|NULL",
            connection.QueryText("""SELECT group_concat("ID" || '|' || hex("Hash") || '|' || "Size" || '|' || coalesce("VolumeID", 'NULL'), ';') FROM (SELECT * FROM "Block" ORDER BY "ID")"""));

        // A failed insert keeps SQLite's extended code (SQLITE_CONSTRAINT_PRIMARYKEY, the trigger's) and runs again.
        var duplicate = Assert.Throws<BlockDbException>(() => insert.InsertBlock(1, hash, 4096, null));
        Assert.Equal((SqliteResultCode.Constraint, 1555), (duplicate.SqliteErrorCode, duplicate.SqliteExtendedErrorCode));
        var refused = Assert.Throws<BlockDbException>(() => insert.InsertBlock(4, hash, -1, null));
        Assert.Equal((SqliteResultCode.Constraint, SqliteResultCode.ConstraintTrigger), (refused.SqliteErrorCode, refused.SqliteExtendedErrorCode));
        insert.InsertBlock(4, hash, 1, 7);
        Assert.Equal("4", connection.QueryText("""SELECT COUNT(*) FROM "Block" """));
    }

    [Theory]
    [InlineData(ProviderCatalog.PInvoke)]
    [InlineData(ProviderCatalog.MicrosoftData)]
    public void The_one_call_insert_refuses_a_busy_or_disposed_statement_before_SQLite_sees_it(string provider)
    {
        using var connection = OpenBlocks(provider);
        var statement = connection.Prepare(new SqlStatement("InsertBlockReturning", Insert.Text + """ RETURNING "ID" """, "@ID", "@Hash", "@Size", "@VolumeID"));
        var insert = Assert.IsAssignableFrom<IBlockInsertStatement>(statement);
        insert.InsertBlock(1, [1], 1, null); // runs to completion: the RETURNING row is stepped past, the statement reset
        statement.BindInt64(1, 2);
        Assert.True(statement.Step()); // stepped, not reset: SQLite would log a bind on a busy statement as misuse
        var busy = Assert.Throws<BlockDbException>(() => insert.InsertBlock(3, [3], 3, null));
        Assert.Equal(SqliteResultCode.Misuse, busy.SqliteErrorCode);
        statement.Reset();
        statement.Dispose();
        Assert.Throws<ObjectDisposedException>(() => insert.InsertBlock(3, [3], 3, null));
        Assert.Equal("2", connection.QueryText("""SELECT COUNT(*) FROM "Block" """));
    }

    private ISqliteConnection OpenBlocks(string provider)
    {
        var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate, 1000));
        connection.Execute("""CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" BLOB NOT NULL, "Size" INTEGER NOT NULL, "VolumeID" INTEGER)""");
        connection.Execute("""CREATE TRIGGER "PositiveSize" BEFORE INSERT ON "Block" WHEN NEW."Size" < 1 BEGIN SELECT RAISE(ABORT, 'size'); END""");
        return connection;
    }
}
