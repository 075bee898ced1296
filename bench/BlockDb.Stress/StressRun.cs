using System.Diagnostics;
using System.Globalization;

namespace BlockDb.Stress;

/// <summary>What one stress run does.</summary>
/// <param name="Folder">Where the database file goes (created fresh).</param>
/// <param name="Providers">The providers; worker i uses <c>Providers[i % Count]</c>.</param>
/// <param name="Duration">How long the workers run.</param>
/// <param name="Workers">Worker processes running at once (each with two databases, sessions and shared sessions).</param>
/// <param name="Journal">The file's journal mode: WAL, or DELETE where commits can fail with SQLITE_BUSY.</param>
/// <param name="Seed">The seed of the run's random choices.</param>
/// <param name="KillEvery">About how often a worker is killed (SIGKILL) and replaced.</param>
public sealed record StressOptions(
    string Folder,
    IReadOnlyList<string> Providers,
    TimeSpan Duration,
    int Workers = 4,
    JournalMode Journal = JournalMode.Wal,
    int Seed = 1,
    double KillEverySeconds = 2.0);

/// <summary>
/// Runs worker processes and a foreign SQL writer on one new KeyMap file, kills and restarts workers at random,
/// then checks the file: <see cref="IBlockDatabase.CheckAsync"/> clean, every acknowledged block at its ID (unless
/// the foreign writer rewrote that ID), every acknowledged blockset with exactly its blocks, one ID per block.
/// </summary>
public static class StressRun
{
    public static async Task<StressReport> RunAsync(StressOptions options, Action<string> log)
    {
        Directory.CreateDirectory(options.Folder);
        var path = Path.Combine(options.Folder, "stress.db");
        await using (BlockDatabase.Open(new BlockDbOptions { Provider = options.Providers[0], DataSource = path, Pragmas = { JournalMode = options.Journal } }))
        {
        }

        var random = new Random(options.Seed);
        var clock = Stopwatch.StartNew();
        var report = new StressReport { Label = $"{string.Join('+', options.Providers)}, {options.Journal}" };
        var workers = new List<Child>();
        var finished = new List<Child>();
        var foreign = Child.Start("foreign", path, "PInvoke", options.Journal, options.Duration, random.Next());
        for (var i = 0; i < options.Workers; i++)
        {
            workers.Add(Child.Start("worker", path, options.Providers[i % options.Providers.Count], options.Journal, options.Duration, random.Next()));
        }

        report.Processes = options.Workers + 1;
        while (clock.Elapsed < options.Duration - TimeSpan.FromSeconds(1.5))
        {
            await Task.Delay(TimeSpan.FromSeconds(options.KillEverySeconds * (0.5 + random.NextDouble())));
            var left = options.Duration - clock.Elapsed;
            if (left < TimeSpan.FromSeconds(1.5))
            {
                break;
            }

            var victim = random.Next(workers.Count);
            var killed = workers[victim];
            killed.Kill();
            finished.Add(killed);
            report.Kills++;
            workers[victim] = Child.Start("worker", path, killed.Provider, options.Journal, left, random.Next());
            report.Processes++;
        }

        foreach (var child in workers.Append(foreign))
        {
            if (!await child.WaitForExitAsync(TimeSpan.FromSeconds(90)))
            {
                report.Failures.Add($"HANG: {child.Role} process ({child.Provider}) did not end 90 s after its run time");
                child.Kill();
            }

            finished.Add(child);
        }

        foreach (var child in finished)
        {
            report.Read(child.Lines);
            if (child.ExitCode is { } code && code != 0 && !child.Killed)
            {
                report.Failures.Add($"{child.Role} process ({child.Provider}) exited with {code}: {string.Join(" | ", child.Lines.Where(l => l.StartsWith("stderr", StringComparison.Ordinal)).Take(5))}");
            }
        }

        await VerifyAsync(path, options.Providers[^1], report);
        report.Elapsed = clock.Elapsed;
        // Every line of every process, in start order, with its process's life: what a diagnosis needs.
        var childrenLog = Path.Combine(options.Folder, "children.log");
        await File.WriteAllLinesAsync(childrenLog, finished.OrderBy(c => c.StartedTicks).SelectMany(c =>
            c.Lines.Select(l => $"[{c.Role} {c.Provider} pid {c.Id} started @{c.StartedTicks}{(c.KilledTicks is { } k ? $" killed @{k}" : string.Empty)}] {l}")));
        if (report.Failures.Count > 0)
        {
            report.Failures.Insert(0, $"every process's output: {childrenLog}");
        }

        log(report.ToString());
        return report;
    }

    private static async Task VerifyAsync(string path, string provider, StressReport report)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path });
        var check = await db.CheckAsync();
        report.Check = check;
        if (!check.IsClean)
        {
            report.Failures.Add($"CheckAsync is not clean: {check}");
        }

        await using var session = await db.OpenSessionAsync();
        foreach (var (key, ids) in report.AckedIds)
        {
            // Foreign-written IDs may have been rewritten by the foreign writer since BlockDb returned them.
            var blockDbIds = ids.Where(id => !report.ForeignIds.Contains(id)).ToList();
            if (blockDbIds.Count == 0)
            {
                continue;
            }

            if (blockDbIds.Distinct().Count() > 1)
            {
                report.Failures.Add($"block {StressKeys.Format(key)} was acknowledged with IDs {string.Join(", ", blockDbIds.Distinct())}");
            }

            var found = await session.FindBlockAsync(key);
            if (found != blockDbIds[0])
            {
                report.Failures.Add($"acknowledged block {StressKeys.Format(key)} = ID {blockDbIds[0]} is now {found?.ToString(CultureInfo.InvariantCulture) ?? "missing"}");
            }
        }

        foreach (var (id, blocks) in report.AckedBlocksets)
        {
            try
            {
                var listed = new BlocksetBlock[blocks.Length + 1]; // one more: a longer listing shows
                var count = await session.ListBlocksetBlocksAsync(id, 0, listed);
                if (!listed.Take(count).Select(b => b.Block).SequenceEqual(blocks))
                {
                    report.Failures.Add($"acknowledged blockset {id} holds other blocks than written");
                }
            }
            catch (BlocksetNotFoundException)
            {
                report.Failures.Add($"acknowledged blockset {id} is missing");
            }
        }
    }

    /// <summary>A stress child process and the lines it printed.</summary>
    private sealed class Child
    {
        private readonly Process _process;
        private readonly List<string> _lines = [];

        private Child(Process process, string role, string provider)
        {
            _process = process;
            Role = role;
            Provider = provider;
        }

        public string Role { get; }

        public string Provider { get; }

        public bool Killed { get; private set; }

        public int Id { get; private set; }

        public long StartedTicks { get; private set; }

        public long? KilledTicks { get; private set; }

        public int? ExitCode => _process.HasExited ? _process.ExitCode : null;

        public IReadOnlyList<string> Lines
        {
            get
            {
                lock (_lines)
                {
                    return [.. _lines];
                }
            }
        }

        public static Child Start(string role, string path, string provider, JournalMode journal, TimeSpan duration, int seed)
        {
            var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            start.ArgumentList.Add(typeof(StressRun).Assembly.Location);
            foreach (var arg in new[] { role, path, provider, journal.ToString(), duration.TotalSeconds.ToString("F1", CultureInfo.InvariantCulture), seed.ToString(CultureInfo.InvariantCulture) })
            {
                start.ArgumentList.Add(arg);
            }

            var child = new Child(new Process { StartInfo = start }, role, provider);
            child._process.OutputDataReceived += (_, e) => child.Add(e.Data);
            child._process.ErrorDataReceived += (_, e) => child.Add(e.Data is null ? null : "stderr " + e.Data);
            child.StartedTicks = DateTime.UtcNow.Ticks;
            child._process.Start();
            child.Id = child._process.Id;
            child._process.BeginOutputReadLine();
            child._process.BeginErrorReadLine();
            return child;
        }

        public void Kill()
        {
            Killed = true;
            KilledTicks = DateTime.UtcNow.Ticks;
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }

        public async Task<bool> WaitForExitAsync(TimeSpan timeout)
        {
            try
            {
                await _process.WaitForExitAsync().WaitAsync(timeout);
                _process.WaitForExit(); // drains the output
                return true;
            }
            catch (TimeoutException)
            {
                return false;
            }
        }

        private void Add(string? line)
        {
            if (line is not null)
            {
                lock (_lines)
                {
                    _lines.Add(line);
                }
            }
        }
    }
}
