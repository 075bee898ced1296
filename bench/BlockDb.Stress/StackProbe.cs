using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Security.Cryptography;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Stress;

/// <summary>
/// <c>stackprobe</c>: how deep the hot path is (issue 23). A tracing SQLite driver around the named one records the
/// stack at every statement BlockDb runs (<see cref="ISqliteStatement.Step"/>, <see cref="ISqliteStatement.ExecuteNonQuery"/>,
/// <see cref="ISqliteConnection.Execute"/>) during a <c>SelectXorInsertAsync(string, long)</c> that finds an existing
/// block (hit) and one that inserts a new one, the first write of its batch (miss), under KeyMap, WAL and default
/// options (but for a read transaction held up to a minute, below) on a file of <c>blocks</c> blocks, the shallowest of
/// five of each. It prints, for each, the BlockDb frames from the public call down to the
/// statement (outermost first, with their files) and two lines the tests read:
/// <c>HIT frames=N files=F statements=S</c> and the same for <c>MISS</c>, where N counts the BlockDb frames below the
/// public method on the deepest stack (the public method itself not counted) and F the distinct files of those frames
/// and the public method. Run it with <c>DOTNET_JITMinOpts=1</c>: nothing is inlined, so the frames are the source's
/// and the same every run (at tier 1 with dynamic PGO most of them are inlined away; this measures structure, not speed).
/// </summary>
internal static class StackProbe
{
    public static async Task<int> RunAsync(string provider, int blocks)
    {
        var folder = Path.Combine(Path.GetTempPath(), "blockdb-stackprobe", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        try
        {
            var path = Path.Combine(folder, "probe.db");
            // The read transaction's idle timer (50 ms by default) enters the session's gate; a traced call that meets it
            // takes the async rest, one frame deeper, so on a loaded machine the count would depend on timing. Held for
            // up to a minute, the timer cannot fire between the warm-up and the traced calls: the probe measures the
            // synchronous path every run.
            var options = new BlockDbOptions
            {
                Provider = provider,
                DataSource = path,
                Index = { Layout = BlockLayout.KeyMap },
                Batching = { ReadTransactionMilliseconds = 60_000 },
            };
            await using (var fill = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap }, Batching = { CommitEvery = 100_000 } }))
            await using (var session = await fill.OpenSessionAsync())
            {
                for (var i = 0; i < blocks; i++)
                {
                    await session.SelectXorInsertAsync(BlockKey.Parse(Hash(i), 4096));
                }

                await session.CommitAsync();
            }

            var driver = new TracingDriver(ProviderCatalog.SqliteDriver(provider));
            await using var db = new BlockDatabaseBuilder(options).UseSqliteDriver(driver).Build();
            await using var probe = await db.OpenSessionAsync();

            // Warm up the path once (map loaded, statements prepared, read transaction open), then trace.
            await probe.FindBlockAsync(BlockKey.Parse(Hash(1), 4096));
            await probe.SelectXorInsertAsync(BlockKey.Parse(Hash(2), 4096));

            // A call that meets background work in the session's gate (a timer, a metrics sample) takes the async rest,
            // one or two frames deeper, by design; on a loaded machine that can happen to any one call. The probe
            // measures the synchronous path: it traces a few calls of each kind and keeps the shallowest.
            // BlockDb frames of earlier calls under this program's frame (an earlier call's resumed async rest; see LibraryFrames).
            var earlier = AllLibraryFrames(new StackTrace(0, fNeedFileInfo: false)).Count;
            List<(string, StackTrace)>? hitStacks = null, missStacks = null;
            var deferred = 0;
            for (var attempt = 0; attempt < Attempts; attempt++)
            {
                driver.Arm();
                var hit = await probe.SelectXorInsertAsync(BlockKey.Parse(Hash((blocks / 2) + attempt), 4096));
                var stacks = driver.Disarm();
                if (hit.Created)
                {
                    throw new InvalidOperationException("The hit created a block.");
                }

                deferred += Deferred(stacks) ? 1 : 0;
                hitStacks = Shallower(hitStacks, stacks);

                driver.Arm();
                var miss = await probe.SelectXorInsertAsync(BlockKey.Parse(Hash(-1 - attempt), 4096));
                stacks = driver.Disarm();
                if (!miss.Created)
                {
                    throw new InvalidOperationException("The miss did not create a block.");
                }

                deferred += Deferred(stacks) ? 1 : 0;
                missStacks = Shallower(missStacks, stacks);
                await probe.CommitAsync(); // the next miss is the first write of its batch again
            }

            Console.WriteLine($"{provider}, KeyMap, WAL, {blocks:N0} blocks, DOTNET_JITMinOpts={Environment.GetEnvironmentVariable("DOTNET_JITMinOpts") ?? "(unset)"}; {Attempts} calls of each kind traced, {deferred} of them met background work (the shallowest of each kind is reported); the program ran on {earlier} BlockDb frames of an earlier call's async rest (not counted)");
            Report("HIT", hitStacks!);
            Report("MISS", missStacks!);
            return 0;
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>How many calls of each kind are traced; the shallowest is reported.</summary>
    private const int Attempts = 5;

    /// <summary>Whether a traced call itself went through its async rest (it met background work in the gate).</summary>
    private static bool Deferred(List<(string Statement, StackTrace Stack)> stacks) =>
        stacks.Any(s => LibraryFrames(s.Stack).Any(f => f.Method.Contains("LaterAsync", StringComparison.Ordinal) || f.Method.Contains("WaitAndEnterAsync", StringComparison.Ordinal)));

    /// <summary>The traced call whose deepest stack has fewer BlockDb frames.</summary>
    private static List<(string, StackTrace)> Shallower(List<(string, StackTrace)>? best, List<(string, StackTrace)> next) =>
        best is null || Depth(next) < Depth(best) ? next : best;

    private static int Depth(List<(string Statement, StackTrace Stack)> stacks) => stacks.Max(s => LibraryFrames(s.Stack).Count);

    private static void Report(string label, List<(string Statement, StackTrace Stack)> stacks)
    {
        var paths = stacks.Select(s => (s.Statement, Frames: LibraryFrames(s.Stack))).ToList();
        var deepest = paths.MaxBy(p => p.Frames.Count);
        var files = deepest.Frames.Select(f => f.File).Where(f => f.Length > 0).Distinct().ToList();
        Console.WriteLine();
        Console.WriteLine($"{label}: {paths.Count} statements: {string.Join(" | ", paths.Select(p => $"{p.Statement} ({p.Frames.Count - 1} frames)"))}");
        Console.WriteLine($"  deepest ({deepest.Statement}), outermost first:");
        foreach (var frame in deepest.Frames)
        {
            Console.WriteLine($"    {frame.Method}  [{frame.File}:{frame.Line}]");
        }

        var allFiles = paths.SelectMany(p => p.Frames).Select(f => f.File).Where(f => f.Length > 0).Distinct().Order().ToList();
        Console.WriteLine($"  files on any stack of the call ({allFiles.Count}): {string.Join(", ", allFiles)}");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{label} frames={deepest.Frames.Count - 1} files={files.Count} statements={paths.Count} stackfiles={allFiles.Count}"));
    }

    /// <summary>
    /// The traced call's BlockDb frames, outermost first: from its public method inwards. Frames further out are not the
    /// call's: once an earlier call has gone down its async rest (say one of the fill's 20,000 calls met its session's
    /// 50 ms read timer), the rest of this program runs synchronously inside that call's resumed continuation, and every
    /// later stack keeps its frames (<c>CallGate.WaitAndEnterAsync</c>, <c>SelectXorInsertLaterAsync</c>) below this
    /// program's. A call that itself resumed after an await has no public frame on the stack: all its frames count.
    /// </summary>
    private static List<(string Method, string File, int Line)> LibraryFrames(StackTrace stack)
    {
        var frames = AllLibraryFrames(stack);
        var call = frames.FindLastIndex(f => f.Method == PublicMethod);
        return call > 0 ? frames[call..] : frames;
    }

    /// <summary>The traced public method, as <see cref="AllLibraryFrames"/> names it.</summary>
    private const string PublicMethod = "BlockSession`1.SelectXorInsertAsync";

    /// <summary>The frames of BlockDb's library assemblies (not this program's), outermost first.</summary>
    private static List<(string Method, string File, int Line)> AllLibraryFrames(StackTrace stack)
    {
        var frames = new List<(string, string, int)>();
        for (var i = stack.FrameCount - 1; i >= 0; i--)
        {
            var frame = stack.GetFrame(i);
            if (frame?.GetMethod() is not { DeclaringType: { } type } method)
            {
                continue;
            }

            var assembly = type.Assembly.GetName().Name ?? string.Empty;
            if (!(assembly == "BlockDb" || assembly.StartsWith("BlockDb.", StringComparison.Ordinal)) || type.Assembly == typeof(StackProbe).Assembly)
            {
                continue;
            }

            frames.Add(($"{Describe(type)}.{method.Name}", Relative(frame.GetFileName()), frame.GetFileLineNumber()));
        }

        return frames;
    }

    private static string Describe(Type type) => type.DeclaringType is { } outer ? $"{Describe(outer)}.{type.Name}" : type.Name;

    private static string Relative(string? file)
    {
        if (string.IsNullOrEmpty(file))
        {
            return string.Empty;
        }

        var normalized = file.Replace('\\', '/');
        var at = normalized.LastIndexOf("/src/", StringComparison.Ordinal);
        return at >= 0 ? normalized[(at + 5)..] : Path.GetFileName(normalized);
    }

    private static string Hash(int i) => Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(i)));

    /// <summary>A driver that records the stack at each statement while armed; otherwise it only forwards.</summary>
    private sealed class TracingDriver(ISqliteDriver inner) : ISqliteDriver
    {
        private List<(string, StackTrace)>? _stacks;

        public string Name => inner.Name;

        public string NativeLibraryVersion => inner.NativeLibraryVersion;

        public void Arm() => _stacks = [];

        public List<(string, StackTrace)> Disarm()
        {
            var stacks = _stacks ?? [];
            _stacks = null;
            return stacks;
        }

        public ISqliteConnection Open(SqliteOpenOptions options) => new TracedConnection(this, inner.Open(options));

        private void Record(string statement)
        {
            _stacks?.Add((statement, new StackTrace(1, fNeedFileInfo: true)));
        }

        private sealed class TracedConnection(TracingDriver driver, ISqliteConnection inner) : ISqliteConnection
        {
            public bool InTransaction => inner.InTransaction;

            public ISqliteStatement Prepare(SqlStatement statement) => new TracedStatement(driver, inner.Prepare(statement));

            public void Execute(string sql)
            {
                driver.Record(sql);
                inner.Execute(sql);
            }

            public void ExecuteWithoutRetry(string sql)
            {
                driver.Record(sql);
                inner.ExecuteWithoutRetry(sql);
            }

            public string? QueryText(string sql) => inner.QueryText(sql);

            public SqliteCacheStats? ReadCacheStats() => inner.ReadCacheStats();

            public void Dispose() => inner.Dispose();
        }

        private sealed class TracedStatement(TracingDriver driver, ISqliteStatement inner) : ISqliteStatement
        {
            public SqlStatement Statement => inner.Statement;

            public void BindInt64(int index, long value) => inner.BindInt64(index, value);

            public void BindDouble(int index, double value) => inner.BindDouble(index, value);

            public void BindText(int index, string value) => inner.BindText(index, value);

            public void BindText(int index, ReadOnlySpan<byte> utf8) => inner.BindText(index, utf8);

            public void BindBlob(int index, ReadOnlySpan<byte> value) => inner.BindBlob(index, value);

            public void BindNull(int index) => inner.BindNull(index);

            public bool Step()
            {
                driver.Record(Name());
                return inner.Step();
            }

            public long ColumnInt64(int column) => inner.ColumnInt64(column);

            public double ColumnDouble(int column) => inner.ColumnDouble(column);

            public bool ColumnIsNull(int column) => inner.ColumnIsNull(column);

            public string? ColumnText(int column) => inner.ColumnText(column);

            public int ColumnBlob(int column, Span<byte> destination) => inner.ColumnBlob(column, destination);

            public int ExecuteNonQuery()
            {
                driver.Record(Name());
                return inner.ExecuteNonQuery();
            }

            public void Reset() => inner.Reset();

            public void Dispose() => inner.Dispose();

            private string Name() => inner.Statement.Name;
        }
    }
}
