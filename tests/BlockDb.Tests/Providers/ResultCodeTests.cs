using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// A SQLite failure keeps SQLite's primary and extended result codes on every provider, and the statement that failed
/// can be bound and run again. System.Data.SQLite keeps extended result codes off and leaves a failed statement
/// stepped but not reset (binding it again is <c>SQLITE_MISUSE</c>), unlike Microsoft.Data.Sqlite and SQLite itself.
/// </summary>
public sealed class ResultCodeTests : IDisposable
{
    private static readonly SqlStatement Insert = new("InsertItem", """INSERT INTO "Item" ("Key", "Value") VALUES (@Key, @Value)""", "@Key", "@Value");

    private readonly TempFolder _folder = new();

    public static TheoryData<string> SqliteProviders() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public void A_failed_statement_keeps_the_extended_result_code_and_runs_again(string provider)
    {
        using var connection = OpenItems(provider);
        using var insert = connection.Prepare(Insert);
        Run(insert, 1, 10);

        // UNIQUE, NOT NULL, then RAISE(ABORT) in a trigger: three extended codes of SQLITE_CONSTRAINT (19).
        var unique = Assert.Throws<BlockDbException>(() => Run(insert, 1, 11));
        AssertCodes(unique, SqliteResultCode.Constraint, SqliteResultCode.ConstraintUnique);
        var notNull = Assert.Throws<BlockDbException>(() => Run(insert, 2, null));
        AssertCodes(notNull, SqliteResultCode.Constraint, 1299);
        var trigger = Assert.Throws<BlockDbException>(() => Run(insert, 3, -1));
        AssertCodes(trigger, SqliteResultCode.Constraint, SqliteResultCode.ConstraintTrigger);

        // The same prepared statement, bound again after each failure.
        Run(insert, 4, 40);
        Assert.Equal("2", connection.QueryText("""SELECT COUNT(*) FROM "Item" """));
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public void A_failed_step_keeps_the_extended_result_code_and_steps_again(string provider)
    {
        using var connection = OpenItems(provider);
        using var insert = connection.Prepare(new SqlStatement("InsertItemReturning", Insert.Text + """ RETURNING "Key" """, "@Key", "@Value"));
        insert.BindInt64(1, 1);
        insert.BindInt64(2, 10);
        Assert.True(insert.Step());
        insert.Reset();

        var unique = Assert.Throws<BlockDbException>(() => insert.Step());
        AssertCodes(unique, SqliteResultCode.Constraint, SqliteResultCode.ConstraintUnique);
        insert.BindInt64(1, 2);
        Assert.True(insert.Step());
        Assert.Equal(2, insert.ColumnInt64(0));
        insert.Reset();
    }

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public void A_failed_open_keeps_the_primary_result_code(string provider)
    {
        var missing = _folder.File("missing.db");
        var e = Assert.Throws<BlockDbException>(() => ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(missing, SqliteOpenMode.ReadWrite)));
        Assert.Equal(SqliteResultCode.CantOpen, e.SqliteErrorCode);
        Assert.Equal(SqliteResultCode.CantOpen, e.SqliteExtendedErrorCode! & 0xFF);
        Assert.False(File.Exists(missing));
    }

    private ISqliteConnection OpenItems(string provider)
    {
        var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate, 1000));
        connection.Execute("""CREATE TABLE "Item" ("Key" INTEGER NOT NULL UNIQUE, "Value" INTEGER NOT NULL)""");
        connection.Execute("""CREATE TRIGGER "NoNegative" BEFORE INSERT ON "Item" WHEN NEW."Value" < 0 BEGIN SELECT RAISE(ABORT, 'negative'); END""");
        return connection;
    }

    private static void AssertCodes(BlockDbException e, int primary, int extended)
    {
        Assert.Equal(primary, e.SqliteErrorCode);
        Assert.Equal(extended, e.SqliteExtendedErrorCode);
    }

    private static void Run(ISqliteStatement insert, long key, long? value)
    {
        insert.BindInt64(1, key);
        if (value is { } v)
        {
            insert.BindInt64(2, v);
        }
        else
        {
            insert.BindNull(2);
        }

        insert.ExecuteNonQuery();
    }
}
