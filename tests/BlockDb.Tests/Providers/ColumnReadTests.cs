using BlockDb.Drivers;
using BlockDb.Drivers.Native;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// A statement's column reads give SQLite's value for every storage class: a BLOB (short, long, or a zeroblob() result)
/// or TEXT read as bytes as stored, a number read as bytes as SQLite's text of it, NULL as -1; and on PInvoke a read
/// with no current row or out of range is refused with SQLite's result code before SQLite sees it, the statement still
/// usable after.
/// </summary>
public sealed class ColumnReadTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    // SystemData's reader refuses a number or a text read as bytes; BlockDb's driver reads an integer and a text as
    // SQLite would and refuses a real number (ForeignColumnTypeTests), so it is not held to this.
    [Theory]
    [InlineData(ProviderCatalog.PInvoke)]
    [InlineData(ProviderCatalog.MicrosoftData)]
    public void Bytes_of_every_storage_class_are_the_stored_bytes_or_the_text_of_the_number(string provider)
    {
        using var connection = Open(provider);
        connection.Execute("""CREATE TABLE "Value" ("ID" INTEGER PRIMARY KEY, "Any")""");
        connection.Execute("""INSERT INTO "Value" VALUES (1, x'0102FF00'), (2, 'abc'), (3, 1234567890123), (4, 2.5), (5, NULL), (6, x''), (7, randomblob(2000))""");
        using var read = connection.Prepare(new SqlStatement("ReadValue", """SELECT "Any", "ID" FROM "Value" WHERE "ID" = @ID""", "@ID"));
        var buffer = new byte[32];
        string Read(long id)
        {
            read.BindInt64(1, id);
            Assert.True(read.Step());
            var length = read.ColumnBlob(0, buffer);
            var result = $"{length}|{Convert.ToHexString(buffer, 0, Math.Clamp(length, 0, buffer.Length))}|{read.ColumnInt64(1)}";
            read.Reset();
            return result;
        }

        Assert.Equal("4|0102FF00|1", Read(1));
        Assert.Equal("3|" + Convert.ToHexString("abc"u8) + "|2", Read(2));
        Assert.Equal("13|" + Convert.ToHexString("1234567890123"u8) + "|3", Read(3));
        Assert.Equal("3|" + Convert.ToHexString("2.5"u8) + "|4", Read(4));
        Assert.Equal("-1||5", Read(5));
        Assert.Equal("0||6", Read(6));
        Assert.Equal("2000|" + connection.QueryText("""SELECT hex(substr("Any", 1, 32)) FROM "Value" WHERE "ID" = 7""") + "|7", Read(7));

        // A zeroblob() result, which SQLite expands as it is read.
        using var zeros = connection.Prepare(new SqlStatement("Zeros", "SELECT zeroblob(5)"));
        Assert.True(zeros.Step());
        buffer.AsSpan().Fill(9);
        Assert.Equal(5, zeros.ColumnBlob(0, buffer));
        Assert.Equal("00000000000909", Convert.ToHexString(buffer, 0, 7));
        zeros.Reset();

        // The number's text is what SQLite itself gives for it, and reading it left the value an integer.
        Assert.Equal("1234567890123|integer", connection.QueryText("""SELECT CAST("Any" AS TEXT) || '|' || typeof("Any") FROM "Value" WHERE "ID" = 3"""));
    }

    /// <summary>Misuse reaching SQLite would be logged (sqlite3_log, possibly an application's managed callback) and, on a
    /// finalized handle, read freed memory: PInvoke's state checks refuse it first.</summary>
    [Fact]
    public void A_PInvoke_column_read_without_a_row_or_out_of_range_is_refused_before_SQLite_sees_it()
    {
        using var connection = Open(ProviderCatalog.PInvoke);
        connection.Execute("""CREATE TABLE "Value" ("ID" INTEGER PRIMARY KEY, "Data" BLOB)""");
        connection.Execute("""INSERT INTO "Value" VALUES (1, x'01')""");
        using var read = connection.Prepare(new SqlStatement("ReadValue", """SELECT "Data", "ID" FROM "Value" WHERE "ID" = @ID""", "@ID"));
        var buffer = new byte[8];

        read.BindInt64(1, 1);
        Assert.Equal(SqliteResultCode.Misuse, Assert.Throws<BlockDbException>(() => read.ColumnBlob(0, buffer)).SqliteErrorCode);
        Assert.True(read.Step());
        Assert.Equal(SqliteCodes.Range, Assert.Throws<BlockDbException>(() => read.ColumnInt64(2)).SqliteErrorCode);
        Assert.Equal(SqliteCodes.Range, Assert.Throws<BlockDbException>(() => read.ColumnBlob(-1, buffer)).SqliteErrorCode);
        Assert.False(read.Step());
        Assert.Equal(SqliteResultCode.Misuse, Assert.Throws<BlockDbException>(() => read.ColumnIsNull(0)).SqliteErrorCode);
        read.Reset();

        read.BindInt64(1, 1);
        Assert.True(read.Step());
        Assert.Equal(1, read.ColumnBlob(0, buffer));
        Assert.Equal(1, read.ColumnInt64(1));
        read.Reset();
    }

    private ISqliteConnection Open(string provider) =>
        ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate, 1000));
}
