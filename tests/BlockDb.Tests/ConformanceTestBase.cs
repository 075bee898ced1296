namespace BlockDb.Tests;

/// <summary>
/// The behaviour every provider must have with every block layout, on real SQLite files in temp folders. Each
/// test is a theory over <see cref="Matrix"/>, generated from the provider catalogue and the layout enum, so a new
/// provider or layout runs the whole suite with no new test code (the Dapper idea, without hand-picked subclasses).
/// The suite is split by theme into classes (operations, faults, fuzz, shared repository) so xUnit can run them
/// side by side.
/// </summary>
public abstract class ConformanceTestBase : IDisposable
{
    private readonly TempFolder _folder = new();
    private string? _provider;
    private BlockLayout? _layout;

    /// <summary>Every provider × every block layout.</summary>
    public static TheoryData<string, BlockLayout> Matrix()
    {
        var data = new TheoryData<string, BlockLayout>();
        foreach (var provider in BlockDbProviders.Names)
        {
            foreach (var layout in Enum.GetValues<BlockLayout>())
            {
                data.Add(provider, layout);
            }
        }

        return data;
    }

    /// <summary>The matrix × every select-xor-insert strategy its layout runs (from the layout catalogue).</summary>
    public static IEnumerable<object[]> MatrixWithStrategies() =>
        from pair in Matrix()
        from strategy in LayoutCatalog.Of((BlockLayout)pair[1]).Strategies
        select new object[] { pair[0], pair[1], strategy };

    /// <summary>The matrix × every select-xor-insert strategy its layout refuses (from the layout catalogue).</summary>
    public static IEnumerable<object[]> MatrixWithRefusedStrategies() =>
        from pair in Matrix()
        from strategy in Enum.GetValues<SelectXorInsertStrategy>().Except(LayoutCatalog.Of((BlockLayout)pair[1]).Strategies)
        select new object[] { pair[0], pair[1], strategy };

    /// <summary>The matrix × hash texts that are not canonical padded base64.</summary>
    public static IEnumerable<object[]> MatrixWithBadHashes() => Cross(
    [
        ["", typeof(ArgumentException)],
        ["not base64 at all", typeof(ArgumentException)],
        ["abc", typeof(ArgumentException)],
        ["ab c", typeof(ArgumentException)],
        ["a===", typeof(ArgumentException)],
        ["====", typeof(ArgumentException)],
        ["AB==", typeof(ArgumentException)], // not canonical: decodes like "AA=="
        ["AAB=", typeof(ArgumentException)], // not canonical: decodes like "AAA="
    ]);

    /// <summary>The matrix × what disposing a session does with its batch, and the blocks left afterwards.</summary>
    public static IEnumerable<object[]> MatrixWithDisposeBehaviors() => Cross(
    [
        [DisposeBehavior.Commit, 3L],
        [DisposeBehavior.Rollback, 1L],
    ]);

    protected string Provider => _provider ?? throw new InvalidOperationException("Call Use(provider, layout) first.");

    protected BlockLayout Layout => _layout ?? throw new InvalidOperationException("Call Use(provider, layout) first.");

    protected string DbPath => _folder.File("index.db");

    protected TempFolder Folder => _folder;

    public void Dispose()
    {
        _folder.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Sets the provider and layout of this test case (each case gets a fresh instance and folder).</summary>
    protected void Use(string provider, BlockLayout layout) => (_provider, _layout) = (provider, layout);

    protected BlockDbOptions Options(Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = Provider, DataSource = DbPath, Index = { Layout = Layout } };
        configure?.Invoke(options);
        return options;
    }

    protected IBlockDatabase Open(Action<BlockDbOptions>? configure = null) => BlockDatabase.Open(Options(configure));

    private static IEnumerable<object[]> Cross(IEnumerable<object[]> extras)
    {
        var rows = extras.ToList();
        foreach (var pair in Matrix())
        {
            foreach (var extra in rows)
            {
                yield return [.. pair, .. extra];
            }
        }
    }
}
