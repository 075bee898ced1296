using BlockDb.Opening;
using BlockDb.Tests.Duplicati;
using static BlockDb.Tests.Duplicati.DuplicatiRecognitionTests;

namespace BlockDb.Tests.Conversion;

/// <summary>
/// A Duplicati database is worked on in place and never converted: a conversion from one (what issue 24 saw drop 15 of
/// Duplicati's 19 tables) or into the Duplicati layout is refused by type before anything is written, and no target file is
/// left behind.
/// </summary>
public sealed class ConvertDuplicatiTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> ProvidersAndTargets() =>
        from provider in ProviderCatalog.SqliteNames
        from layout in LayoutCatalog.Created
        select new object[] { provider, layout };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(ProvidersAndTargets))]
    public async Task A_conversion_from_a_Duplicati_database_is_refused_and_leaves_no_target(string provider, BlockLayout to)
    {
        var source = template.CopyTo(_folder);
        var bytes = FileHash(source);
        var target = _folder.File("target.db");

        var e = await Assert.ThrowsAsync<BlockDbConflictException>(() => BlockDbConverter.ConvertAsync(
            new BlockDbOptions { Provider = provider, DataSource = source },
            new BlockDbOptions { Provider = provider, DataSource = target, Index = { Layout = to } }));

        Assert.Contains("has the Duplicati layout, which a conversion refuses", e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(target));
        Assert.Equal(bytes, FileHash(source));
        AssertNothingBeside(source);
    }

    [Theory]
    [MemberData(nameof(ProvidersAndTargets))]
    public async Task A_conversion_into_the_Duplicati_layout_is_refused_and_leaves_no_target(string provider, BlockLayout from)
    {
        var source = _folder.File("source.db");
        await using (var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = source, Index = { Layout = from } }))
        {
        }

        var target = _folder.File("target.sqlite");
        var e = await Assert.ThrowsAsync<BlockDbConflictException>(() => BlockDbConverter.ConvertAsync(
            new BlockDbOptions { Provider = provider, DataSource = source },
            new BlockDbOptions { Provider = provider, DataSource = target, Index = { Layout = BlockLayout.Duplicati } }));

        Assert.Contains("A conversion into the Duplicati layout is refused", e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(target));
    }
}
