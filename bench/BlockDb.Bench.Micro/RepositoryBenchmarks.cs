using BenchmarkDotNet.Attributes;

namespace BlockDb.Bench.Micro;

/// <summary>
/// BlockDb's hot operations through the public repository API on one provider (one fixture per provider
/// below): find an existing block; select-xor-insert an existing block (hit) and a new one (miss) with each
/// strategy; insert a new block. Every call is <c>.GetAwaiter().GetResult()</c> on the ValueTask, which BlockDb
/// completes synchronously (awaiting it adds only the caller's state machine, no allocation).
/// Writes run in one open transaction (<c>CommitEvery = 0</c>); the 65,536 new blocks are rolled back and
/// reused when they run out, so the table stays near <see cref="Rows"/> rows. Recommended pragmas (WAL).
/// </summary>
[MemoryDiagnoser]
public abstract class RepositoryBenchmarks
{
    private const int ExistingPool = 4096;
    private const int FreshPool = 65_536;

    private readonly IBlockRepository?[] _sessions = new IBlockRepository?[3];
    private readonly IBlockDatabase?[] _databases = new IBlockDatabase?[3];
    private string[] _existing = [];
    private string[] _fresh = [];
    private string _folder = string.Empty;
    private int _hit;
    private int _miss;

    /// <summary>Blocks in the database before the benchmark.</summary>
    [Params(100_000)]
    public int Rows { get; set; }

    /// <summary>The provider under test.</summary>
    protected abstract string Provider { get; }

    [GlobalSetup]
    public void Setup()
    {
        _folder = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"{Provider}-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(_folder);
        var path = Path.Combine(_folder, "bench.db");
        File.Copy(MicroData.Template(Rows), path);
        var strategies = Enum.GetValues<SelectXorInsertStrategy>();
        for (var i = 0; i < strategies.Length; i++)
        {
            _databases[i] = BlockDatabase.Open(new BlockDbOptions
            {
                Provider = Provider,
                DataSource = path,
                Pragmas = new PragmaOptions { Preset = PragmaPreset.Recommended },
                Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Rollback },
                SelectXorInsert = strategies[i],
            });
            _sessions[i] = _databases[i]!.OpenSessionAsync().GetAwaiter().GetResult();
        }

        var step = Math.Max(1, Rows / ExistingPool);
        _existing = [.. Enumerable.Range(0, ExistingPool).Select(i => MicroData.Hash(1, (i * step) % Rows))];
        _fresh = [.. Enumerable.Range(0, FreshPool).Select(i => MicroData.Hash(2, i))];
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        foreach (var session in _sessions)
        {
            session?.Dispose();
        }

        foreach (var db in _databases)
        {
            db?.Dispose();
        }

        Directory.Delete(_folder, recursive: true);
    }

    [Benchmark(Description = "find (select)")]
    [BenchmarkCategory("select")]
    public long? Find() => _sessions[0]!.FindBlockAsync(NextExisting(), MicroData.BlockSize).GetAwaiter().GetResult();

    [Benchmark(Description = "insert")]
    [BenchmarkCategory("insert")]
    public long Insert() => _sessions[0]!.InsertBlockAsync(NextFresh(0), MicroData.BlockSize).GetAwaiter().GetResult();

    [Benchmark(Description = "xor hit SelectThenInsert")]
    [BenchmarkCategory("xor-hit")]
    public SelectXorInsertResult XorHitSelectThenInsert() => Hit(0);

    [Benchmark(Description = "xor hit InsertOrIgnoreThenSelect")]
    [BenchmarkCategory("xor-hit")]
    public SelectXorInsertResult XorHitInsertOrIgnore() => Hit(1);

    [Benchmark(Description = "xor hit InsertReturningThenSelect")]
    [BenchmarkCategory("xor-hit")]
    public SelectXorInsertResult XorHitInsertReturning() => Hit(2);

    [Benchmark(Description = "xor miss SelectThenInsert")]
    [BenchmarkCategory("xor-miss")]
    public SelectXorInsertResult XorMissSelectThenInsert() => Miss(0);

    [Benchmark(Description = "xor miss InsertOrIgnoreThenSelect")]
    [BenchmarkCategory("xor-miss")]
    public SelectXorInsertResult XorMissInsertOrIgnore() => Miss(1);

    [Benchmark(Description = "xor miss InsertReturningThenSelect")]
    [BenchmarkCategory("xor-miss")]
    public SelectXorInsertResult XorMissInsertReturning() => Miss(2);

    private SelectXorInsertResult Hit(int strategy) =>
        _sessions[strategy]!.SelectXorInsertAsync(NextExisting(), MicroData.BlockSize).GetAwaiter().GetResult();

    private SelectXorInsertResult Miss(int strategy) =>
        _sessions[strategy]!.SelectXorInsertAsync(NextFresh(strategy), MicroData.BlockSize).GetAwaiter().GetResult();

    private string NextExisting()
    {
        var i = _hit;
        _hit = i + 1 == _existing.Length ? 0 : i + 1;
        return _existing[i];
    }

    /// <summary>The next new block; when the pool is used up, the open transaction is rolled back so the pool is new again.</summary>
    private string NextFresh(int session)
    {
        if (_miss == _fresh.Length)
        {
            _sessions[session]!.RollbackAsync().GetAwaiter().GetResult();
            _miss = 0;
        }

        return _fresh[_miss++];
    }
}

/// <summary>Microsoft.Data.Sqlite.</summary>
public class MicrosoftDataBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "MicrosoftData";
}

/// <summary>System.Data.SQLite's design, on Mono.Data.Sqlite.</summary>
public class SystemDataBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "SystemData";
}

/// <summary>Direct LibraryImport into e_sqlite3.</summary>
public class PInvokeBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "PInvoke";
}
