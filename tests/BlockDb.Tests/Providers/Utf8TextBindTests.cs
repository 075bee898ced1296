using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// <see cref="ISqliteStatement.BindText(int, ReadOnlySpan{byte})"/> on every SQLite provider: text given as UTF-8 bytes
/// is stored as TEXT, equal to the same text bound from a string (so a unique index sees one value), an empty span binds
/// empty text and not NULL, the caller's buffer may change after the bind, and bytes that are not UTF-8 are refused with
/// <see cref="ArgumentException"/> before SQLite sees them, the statement still usable after.
/// </summary>
public sealed class Utf8TextBindTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public void Text_bound_as_utf8_bytes_is_the_same_text_as_from_a_string_and_invalid_bytes_are_refused(string provider)
    {
        using var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(_folder.File(provider + ".db"), SqliteOpenMode.ReadWriteCreate, 1000));
        connection.Execute("""CREATE TABLE "Value" ("ID" INTEGER PRIMARY KEY, "Text" TEXT NULL UNIQUE)""");
        using var insert = connection.Prepare(new SqlStatement("InsertValue", """INSERT OR IGNORE INTO "Value" ("ID", "Text") VALUES (@ID, @Text)""", "@ID", "@Text"));

        var bytes = "bl\u00f6ck+/="u8.ToArray();
        insert.BindInt64(1, 1);
        insert.BindText(2, bytes);
        bytes.AsSpan().Fill((byte)'x');
        Assert.Equal(1, insert.ExecuteNonQuery());

        // The same text from a string is the same value: the unique constraint ignores it.
        insert.BindInt64(1, 2);
        insert.BindText(2, "bl\u00f6ck+/=");
        Assert.Equal(0, insert.ExecuteNonQuery());

        insert.BindInt64(1, 3);
        insert.BindText(2, ReadOnlySpan<byte>.Empty);
        Assert.Equal(1, insert.ExecuteNonQuery());

        insert.BindInt64(1, 4);
        var e = Assert.Throws<ArgumentException>(() => insert.BindText(2, [0x62, 0xC3, 0x28]));
        Assert.Contains("not valid UTF-8", e.Message, StringComparison.Ordinal);
        insert.BindText(2, "after");
        Assert.Equal(1, insert.ExecuteNonQuery());

        Assert.Equal("1:text:bl\u00f6ck+/=|3:text:|4:text:after", connection.QueryText("""SELECT group_concat("ID" || ':' || typeof("Text") || ':' || "Text", '|') FROM (SELECT * FROM "Value" ORDER BY "ID")"""));
    }
}
