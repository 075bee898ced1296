using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The KeyMap layout's whole-table load (issue 13 item 6, "open at scale"): its statement's plan, what every provider's
/// scan reads, and loads racing writers (BlockDb sessions and a foreign SQL writer) that must never miss a committed row.
/// </summary>
public sealed class KeyMapLoadTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string> SqliteProviders() => ["PInvoke", "SystemData", "MicrosoftData"];

    private IBlockDatabase Open(string name, string provider, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = _folder.File(name), Index = { Layout = BlockLayout.KeyMap } };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    [Fact]
    public async Task The_catch_up_scan_reads_rows_in_ID_order_without_a_sort()
    {
        // The old statement joined pragma_schema_version, so SQLite could not tell that the outer loop yields one row
        // and sorted every block in a temporary B-tree: half of a whole-table load.
        await using (var db = Open("plan.db", "PInvoke"))
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 10));
        }

        using var raw = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(_folder.File("plan.db"), SqliteOpenMode.ReadOnly));
        using var plan = raw.Prepare(new SqlStatement("Plan", "EXPLAIN QUERY PLAN " + BlockDbSql.KeyMapCatchUp.Text, BlockDbSql.KeyMapCatchUp.Parameters.ToArray()));
        var steps = new List<string>();
        while (plan.Step())
        {
            steps.Add(plan.ColumnText(3)!);
        }

        plan.Reset();
        Assert.DoesNotContain(steps, s => s.Contains("TEMP B-TREE", StringComparison.Ordinal));
        Assert.Contains(steps, s => s.Contains("SEARCH B USING INTEGER PRIMARY KEY", StringComparison.Ordinal));
    }
}
