using System.Globalization;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Providers;

/// <summary>
/// The fused calls (a listing's row, the key map's verification read) and the bind-by-bind calls of a driver that does
/// not fuse them (<see cref="StatementCountingDriver"/>) give the same answers and the same errors on rows another
/// writer left behind (the guards away): a hash that is empty, too long, TEXT or an INTEGER; and a listing that failed
/// on such a row leaves its statement reset, so the next listing, find and write on the session work. Every provider.
/// </summary>
public sealed class FusedCallErrorTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Cases =>
        from provider in ProviderCatalog.SqliteNames
        from stored in new[] { "X''", "randomblob(100)", "CAST(\"Hash\" AS TEXT)", "12345" }
        select new object[] { provider, stored };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task A_row_with_a_foreign_hash_gives_the_same_answers_fused_and_unfused_and_the_session_goes_on(string provider, string stored)
    {
        var fused = await RunAsync(provider, stored, wrap: false);
        var unfused = await RunAsync(provider, stored, wrap: true);
        output.WriteLine(fused);
        Assert.Equal(fused, unfused);
        Assert.DoesNotContain("Exception: ", fused.Replace("BlockDbFormatException: ", string.Empty, StringComparison.Ordinal), StringComparison.Ordinal);
    }

    private async Task<string> RunAsync(string provider, string stored, bool wrap)
    {
        var path = _folder.File($"{provider}-{stored.GetHashCode(StringComparison.Ordinal):x}-{wrap}.db");
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap } };
        long bad, good;
        long badId;
        await using (var db = BlockDatabase.Open(options))
        await using (var session = await db.OpenSessionAsync())
        {
            bad = await session.AddBlocksetAsync(new[] { TestData.Block(0, 10), TestData.Block(1, 10), TestData.Block(2, 10) }, new SelectXorInsertResult[3]);
            good = await session.AddBlocksetAsync(new[] { TestData.Block(0, 10), TestData.Block(2, 10) }, new SelectXorInsertResult[2]);
            badId = (long)(await session.FindBlockAsync(TestData.Block(1, 10)))!;
            await session.CommitAsync();
        }

        using (var raw = new RawSql(path))
        {
            var guard = raw.Text("""SELECT sql FROM sqlite_schema WHERE name = 'BlockDbGuardUpdate'""")!;
            raw.Execute("""DROP TRIGGER "BlockDbGuardUpdate" """);
            raw.Execute(string.Create(CultureInfo.InvariantCulture, $"""UPDATE "Block" SET "Hash" = {stored} WHERE "ID" = {badId}"""));
            raw.Execute(guard);
        }

        var builder = new BlockDatabaseBuilder(options);
        if (wrap)
        {
            builder.UseSqliteDriver(new StatementCountingDriver(ProviderCatalog.SqliteDriver(provider)));
        }

        var answers = new List<string>();
        await using (var db = builder.Build())
        await using (var session = await db.OpenSessionAsync())
        {
            var page = new BlocksetBlock[8];
            async Task ListAsync(string what, long blockset, int from)
            {
                try
                {
                    var count = await session.ListBlocksetBlocksAsync(blockset, from, page);
                    answers.Add($"{what}: " + string.Join(' ', page[..count].Select(b => $"{b.Index}:{b.BlockId}:{Convert.ToHexString(b.Block.Hash.Bytes)}:{b.Block.Size}")));
                }
                catch (Exception e)
                {
                    answers.Add($"{what}: {e.GetType().Name}: {e.Message}");
                }
            }

            await ListAsync("bad", bad, 0);
            await ListAsync("bad again", bad, 0);
            await ListAsync("good", good, 0);
            await ListAsync("bad past the row", bad, 2);
            answers.Add($"find 0 = {await session.FindBlockAsync(TestData.Block(0, 10))}");
            answers.Add($"find 1 = {await session.FindBlockAsync(TestData.Block(1, 10))}");
            answers.Add($"sxi 1 = {await session.SelectXorInsertAsync(TestData.Block(1, 10))}");
            var results = new SelectXorInsertResult[3];
            var file = await session.AddBlocksetAsync(new[] { TestData.Block(2, 10), TestData.Block(1, 10), TestData.Block(9, 10) }, results);
            answers.Add($"file {file}: {string.Join(' ', results)}");
            await session.CommitAsync();
            await ListAsync("new file", file, 0);
            await ListAsync("bad after the writes", bad, 0);
        }

        return string.Join('\n', answers);
    }
}
