using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Duplicati;

/// <summary>A file the fixture builds is a plain SQLite file every provider opens: each provider's raw connection reads it, finds it intact, and leaves it as it was.</summary>
public sealed class DuplicatiProviderTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>
{
    public static IEnumerable<object[]> Providers() => ProviderCatalog.SqliteNames.Select(p => new object[] { p });

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_replayed_Duplicati_file_opens_with_each_provider_and_passes_integrity_check(string provider)
    {
        using var folder = new TempFolder();
        var path = template.CopyTo(folder);
        var blocks = DuplicatiFiles.Scalar(path, """SELECT COUNT(*) FROM "Block" """).ToString(System.Globalization.CultureInfo.InvariantCulture);

        using (var connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 5000)))
        {
            Assert.Equal("ok", connection.QueryText("PRAGMA integrity_check"));
            Assert.Equal("19", connection.QueryText("""SELECT max("Version") FROM "Version" """));
            Assert.Equal("43", connection.QueryText("SELECT COUNT(*) FROM sqlite_master"));
            Assert.Equal("wal", connection.QueryText("PRAGMA journal_mode"));
            Assert.Equal(blocks, connection.QueryText("""SELECT COUNT(*) FROM "Block" """));
            Assert.Equal("0", connection.QueryText("PRAGMA application_id"));
        }

        DuplicatiFiles.AssertConsistent(path);
    }
}
