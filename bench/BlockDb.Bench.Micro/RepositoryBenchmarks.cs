using BenchmarkDotNet.Attributes;
using BlockDb.Layouts;

namespace BlockDb.Bench.Micro;

/// <summary>
/// BlockDb's hot operations through the public repository API on one provider (one fixture per provider below),
/// for each block layout: find an existing block (text and binary hash), select-xor-insert an existing block (hit)
/// and a new one (miss), insert a new block, and a file of 16 blocks in one call against 16 per-block calls plus its
/// blockset. Every call is <c>.GetAwaiter().GetResult()</c> on the ValueTask, which BlockDb completes synchronously
/// (awaiting it adds only the caller's state machine, no allocation). Writes run in one open transaction
/// (<c>CommitEvery = 0</c>); the 65,536 new blocks are rolled back and reused when they run out, so the table stays
/// near <see cref="Rows"/> rows. Recommended pragmas (WAL), so reads outside a write batch are read-batched. The
/// select-xor-insert strategies of the indexed layouts are compared by the harness (workloads xor1–xor3), not here.
/// </summary>
[MemoryDiagnoser]
public abstract class RepositoryBenchmarks
{
    private const int ExistingPool = 4096;
    private const int FreshPool = 65_536;
    private const int FileBlocks = 16;

    private readonly SelectXorInsertResult[] _results = new SelectXorInsertResult[FileBlocks];
    private readonly BlockKey[] _keys = new BlockKey[FileBlocks];
    private IBlockDatabase? _database;
    private IBlockSession? _session;
    private string[] _existing = [];
    private BlockHash[] _existingBytes = [];
    private string[] _fresh = [];
    private BlockHash[] _freshBytes = [];
    private BlockKey[] _file = [];
    private (string Hash, long Size)[] _fileText = [];
    private string _folder = string.Empty;
    private int _hit;
    private int _miss;
    private int _files;

    /// <summary>Blocks in the database before the benchmark.</summary>
    [Params(100_000)]
    public int Rows { get; set; }

    /// <summary>The block layout: every layout, or those named in <c>BLOCKDB_MICRO_LAYOUTS</c> (comma-separated, e.g. <c>KeyMap</c>).</summary>
    [ParamsSource(nameof(Layouts))]
    public BlockLayout Layout { get; set; }

    /// <summary>
    /// The layouts to run: <c>BLOCKDB_MICRO_LAYOUTS</c> when set (BenchmarkDotNet's <c>--filter</c> matches methods, not
    /// parameters, and one layout's run is a third of the time on this shared machine), else every layout.
    /// </summary>
    /// <exception cref="ArgumentException">A name in <c>BLOCKDB_MICRO_LAYOUTS</c> is not a layout.</exception>
    public static IEnumerable<BlockLayout> Layouts()
    {
        var named = Environment.GetEnvironmentVariable("BLOCKDB_MICRO_LAYOUTS");
        return string.IsNullOrWhiteSpace(named)
            ? LayoutCatalog.Created
            : [.. named.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Select(n => Enum.TryParse<BlockLayout>(n, ignoreCase: true, out var layout) ? layout : throw new ArgumentException($"BLOCKDB_MICRO_LAYOUTS names '{n}', which is not a layout; give some of {string.Join(", ", Enum.GetNames<BlockLayout>())}."))];
    }

    /// <summary>The provider under test.</summary>
    protected abstract string Provider { get; }

    [GlobalSetup]
    public void Setup()
    {
        _folder = Path.Combine(Path.GetTempPath(), "blockdb-micro", $"{Provider}-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(_folder);
        var path = Path.Combine(_folder, "bench.db");
        File.Copy(MicroData.Template(Rows, Layout), path);
        _database = BlockDatabase.Open(new BlockDbOptions
        {
            Provider = Provider,
            DataSource = path,
            Pragmas = new PragmaOptions { Preset = PragmaPreset.Recommended },
            Batching = new BatchingOptions { CommitEvery = 0, OnDispose = DisposeBehavior.Rollback },
            Index = new IndexOptions { Layout = Layout },
        });
        _session = _database.OpenSessionAsync().GetAwaiter().GetResult();

        var step = Math.Max(1, Rows / ExistingPool);
        _existingBytes = [.. Enumerable.Range(0, ExistingPool).Select(i => MicroData.Bytes(1, (i * step) % Rows))];
        _existing = [.. _existingBytes.Select(h => h.ToString())];
        _freshBytes = [.. Enumerable.Range(0, FreshPool).Select(i => MicroData.Bytes(2, i))];
        _fresh = [.. _freshBytes.Select(h => h.ToString())];

        // A file of 16 blocks: 12 known and 4 new on its first run (known after it until the next rollback).
        _file = [.. Enumerable.Range(0, FileBlocks).Select(i => new BlockKey(i % 4 == 3 ? MicroData.Bytes(3, i) : _existingBytes[i * 7], MicroData.BlockSize))];
        _fileText = [.. _file.Select(b => (b.Hash.ToString(), b.Size))];
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _session?.Dispose();
        _database?.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    [Benchmark(Description = "find (select)")]
    [BenchmarkCategory("select")]
    public long? Find() => _session!.FindBlockAsync(BlockKey.Parse(NextExisting(), MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark(Description = "find, binary hash")]
    [BenchmarkCategory("select")]
    public long? FindBinary() => _session!.FindBlockAsync(new BlockKey(_existingBytes[NextHit()], MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark(Description = "insert")]
    [BenchmarkCategory("insert")]
    public long Insert() => _session!.SelectXorInsertAsync(BlockKey.Parse(_fresh[NextMiss()], MicroData.BlockSize)).GetAwaiter().GetResult().Id;

    [Benchmark(Description = "xor hit")]
    [BenchmarkCategory("xor-hit")]
    public SelectXorInsertResult XorHit() => _session!.SelectXorInsertAsync(BlockKey.Parse(NextExisting(), MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark(Description = "xor hit, binary hash")]
    [BenchmarkCategory("xor-hit")]
    public SelectXorInsertResult XorHitBinary() => _session!.SelectXorInsertAsync(new BlockKey(_existingBytes[NextHit()], MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark(Description = "xor miss")]
    [BenchmarkCategory("xor-miss")]
    public SelectXorInsertResult XorMiss() => _session!.SelectXorInsertAsync(BlockKey.Parse(_fresh[NextMiss()], MicroData.BlockSize)).GetAwaiter().GetResult();

    [Benchmark(Description = "xor miss, binary hash")]
    [BenchmarkCategory("xor-miss")]
    public SelectXorInsertResult XorMissBinary() => _session!.SelectXorInsertAsync(new BlockKey(_freshBytes[NextMiss()], MicroData.BlockSize)).GetAwaiter().GetResult();

    /// <summary>A file the Duplicati way: 16 text calls, then the blockset from the same keys.</summary>
    [Benchmark(Description = "file of 16: per-block calls + blockset", OperationsPerInvoke = FileBlocks)]
    [BenchmarkCategory("file")]
    public long FilePerBlock()
    {
        for (var i = 0; i < FileBlocks; i++)
        {
            _keys[i] = BlockKey.Parse(_fileText[i].Hash, _fileText[i].Size);
            _session!.SelectXorInsertAsync(_keys[i]).GetAwaiter().GetResult();
        }

        var id = _session!.AddBlocksetAsync(_keys, _results).GetAwaiter().GetResult();
        Recycle();
        return id;
    }

    /// <summary>The same file in one call.</summary>
    [Benchmark(Description = "file of 16: one call", OperationsPerInvoke = FileBlocks)]
    [BenchmarkCategory("file")]
    public long FileOneCall()
    {
        var id = _session!.AddBlocksetAsync(_file, _results).GetAwaiter().GetResult();
        Recycle();
        return id;
    }

    private string NextExisting() => _existing[NextHit()];

    private int NextHit()
    {
        var i = _hit;
        _hit = i + 1 == _existing.Length ? 0 : i + 1;
        return i;
    }

    /// <summary>The next new block; when the pool is used up, the open transaction is rolled back so the pool is new again.</summary>
    private int NextMiss()
    {
        if (_miss == _fresh.Length)
        {
            _session!.RollbackAsync().GetAwaiter().GetResult();
            _miss = 0;
        }

        return _miss++;
    }

    /// <summary>Rolls the file benchmarks' writes back now and then, so their new blocks stay new and the table stays its size.</summary>
    private void Recycle()
    {
        if (++_files == 4096)
        {
            _session!.RollbackAsync().GetAwaiter().GetResult();
            _files = 0;
        }
    }
}

/// <summary>Microsoft.Data.Sqlite.</summary>
public class MicrosoftDataBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "MicrosoftData";
}

/// <summary>The System.Data.SQLite package (2.x).</summary>
public class SystemDataBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "SystemData";
}

/// <summary>Direct LibraryImport into e_sqlite3.</summary>
public class PInvokeBenchmarks : RepositoryBenchmarks
{
    protected override string Provider => "PInvoke";
}
