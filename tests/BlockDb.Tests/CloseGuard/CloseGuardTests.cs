using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.Stress;
using Xunit.Abstractions;

namespace BlockDb.Tests.CloseGuard;

/// <summary>
/// Issue 10's lost acknowledged writes in DELETE journal mode: closing a connection dropped the POSIX locks another
/// thread's connection of the same process had just taken (SQLite's close decides to close the descriptor, then
/// closes it, and another thread can lock in between; https://www.sqlite.org/howtocorrupt.html section 2.2). These
/// tests run connections that close beside other connections' locks under the <c>lockdrop</c> probe
/// (Native/lockdrop.c, LD_PRELOAD), which reports every close of the file while the process holds a lock on it, and
/// check <see cref="SqliteCloseGuard"/>'s bookkeeping: nothing left open, a close deferred while the lock cannot be
/// taken, and closed with the last connection.
/// </summary>
public sealed partial class CloseGuardTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> Providers()
    {
        var data = new TheoryData<string>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider);
        }

        data.Add(string.Join(',', ProviderCatalog.SqliteNames));
        return data;
    }

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task No_connection_close_drops_a_lock_another_connection_of_the_process_holds(string providers)
    {
        // Before the guard: about 80 such closes in 5 s with all providers (commit 4c78472), each a lock a
        // connection believed it held and another process could then ignore.
        var probe = BuildProbe();
        var path = _folder.File("stress.db");
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in new[] { typeof(StressRun).Assembly.Location, "closerace", path, providers, "4" })
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["LD_PRELOAD"] = probe;
        start.Environment["LOCKDROP_SUFFIX"] = "stress.db";
        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        var stdout = await process.StandardOutput.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        await process.WaitForExitAsync(timeout.Token);
        var reports = Reports(await stderr);
        output.WriteLine(stdout.Trim());
        output.WriteLine($"lock drops reported: {reports.Count} ({reports.Count(r => r.Contains("libSystem.Native", StringComparison.Ordinal))} by the deliberate .NET close)");
        Assert.Equal(0, process.ExitCode);

        // The deliberate close of the file by .NET while a write transaction holds its lock: the probe is watching.
        Assert.Contains("CONTROL", stdout, StringComparison.Ordinal);
        Assert.Single(reports, r => r.Contains("libSystem.Native", StringComparison.Ordinal));

        // No close by SQLite dropped a lock.
        Assert.DoesNotContain(reports, r => r.Contains("libe_sqlite3", StringComparison.Ordinal));
        var counts = CloseRaceCounts().Match(stdout);
        Assert.True(counts.Success, stdout);
        Assert.True(long.Parse(counts.Groups["opens"].Value, CultureInfo.InvariantCulture) >= CloseRace.Enough, $"too few closes to race: {stdout}");
        Assert.True(long.Parse(counts.Groups["commits"].Value, CultureInfo.InvariantCulture) >= CloseRace.Enough, $"too few write transactions to race with: {stdout}");
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void Every_connection_and_the_sentinel_are_closed_when_the_last_one_is(string providers)
    {
        var drivers = providers.Split(',').Select(ProviderCatalog.SqliteDriver).ToList();
        var path = _folder.File("counted.db");
        var connections = new List<ISqliteConnection>();
        for (var i = 0; i < 6; i++)
        {
            var connection = drivers[i % drivers.Count].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, 1000));
            connection.QueryText("SELECT COUNT(*) FROM sqlite_schema");
            connections.Add(connection);
        }

        Assert.Equal((6, 0), SqliteCloseGuard.Count(path));
        Assert.True(ProcessFiles.Descriptors(path) >= 6);
        foreach (var connection in connections)
        {
            connection.Dispose();
            connection.Dispose();
        }

        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, ProcessFiles.Descriptors(path));
        Assert.Throws<ObjectDisposedException>(() => connections[0].QueryText("SELECT 1"));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_close_while_another_connection_holds_the_exclusive_lock_is_deferred_then_done_with_the_last_close(string providers)
    {
        var drivers = providers.Split(',').Select(ProviderCatalog.SqliteDriver).ToList();
        var path = _folder.File("deferred.db");
        using (var setup = drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate)))
        {
            setup.Execute("PRAGMA journal_mode = DELETE");
            setup.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        var writer = drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
        var closing = drivers[^1].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));
        closing.Execute("BEGIN");
        closing.QueryText("SELECT COUNT(*) FROM \"Item\"");
        closing.Execute("COMMIT");
        writer.Execute("BEGIN EXCLUSIVE");
        writer.Execute("INSERT INTO \"Item\" DEFAULT VALUES");

        // The sentinel cannot take a SHARED lock beside the EXCLUSIVE one: the close returns within its busy timeout
        // (MicrosoftData and SystemData retry BUSY for whole seconds) and the connection waits, holding no lock.
        var clock = Stopwatch.StartNew();
        closing.Dispose();
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"the deferred close took {clock.Elapsed}");
        Assert.Equal((2, 1), SqliteCloseGuard.Count(path));

        writer.Execute("COMMIT");
        writer.Dispose();
        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, ProcessFiles.Descriptors(path));
        using var check = drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly));
        Assert.Equal("1", check.QueryText("SELECT COUNT(*) FROM \"Item\""));
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public void A_file_opened_through_linked_folders_and_a_linked_file_has_one_gate(string providers)
    {
        var drivers = providers.Split(',').Select(ProviderCatalog.SqliteDriver).ToList();
        var real = Directory.CreateDirectory(_folder.File("real")).FullName;
        var path = Path.Combine(real, "linked.db");
        Directory.CreateSymbolicLink(_folder.File("folder-link"), real);
        Directory.CreateSymbolicLink(_folder.File("link-to-link"), _folder.File("folder-link"));
        Directory.CreateSymbolicLink(_folder.File("relative-link"), "real");
        var opened = new List<ISqliteConnection> { drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate)) };
        File.CreateSymbolicLink(Path.Combine(real, "file-link.db"), path);
        var aliases = new[]
        {
            Path.Combine(_folder.File("folder-link"), "linked.db"),
            Path.Combine(_folder.File("link-to-link"), "linked.db"),
            Path.Combine(_folder.File("relative-link"), "linked.db"),
            Path.Combine(_folder.File("folder-link"), "file-link.db"),
            Path.Combine(_folder.File("folder-link"), "..", "real", "linked.db"),
        };
        foreach (var alias in aliases)
        {
            var connection = drivers[opened.Count % drivers.Count].Open(new SqliteOpenOptions(alias, SqliteOpenMode.ReadWrite));
            connection.QueryText("SELECT COUNT(*) FROM sqlite_schema");
            opened.Add(connection);
        }

        // One gate for all six: closes beside the others go through the one sentinel.
        Assert.Equal((6, 0), SqliteCloseGuard.Count(path));
        Assert.Equal((6, 0), SqliteCloseGuard.Count(aliases[1]));
        opened.ForEach(c => c.Dispose());
        Assert.Equal((0, 0), SqliteCloseGuard.Count(path));
        Assert.Equal(0, ProcessFiles.Descriptors(path));

        // A link loop is no file: SQLite refuses to open it, and the guard does not loop.
        File.CreateSymbolicLink(_folder.File("loop-a.db"), _folder.File("loop-b.db"));
        File.CreateSymbolicLink(_folder.File("loop-b.db"), _folder.File("loop-a.db"));
        Assert.ThrowsAny<BlockDbException>(() => drivers[0].Open(new SqliteOpenOptions(_folder.File("loop-a.db"), SqliteOpenMode.ReadWriteCreate)).QueryText("SELECT 1 FROM sqlite_schema"));
    }

    /// <summary>Compiles the probe with the system C compiler (gcc on Debian: apt-get install -y gcc).</summary>
    private string BuildProbe()
    {
        var source = Path.Combine(AppContext.BaseDirectory, "CloseGuard", "Native", "lockdrop.c");
        var library = _folder.File("lockdrop.so");
        var start = new ProcessStartInfo("cc") { RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in new[] { "-O2", "-shared", "-fPIC", "-o", library, source, "-ldl" })
        {
            start.ArgumentList.Add(argument);
        }

        using var compiler = Process.Start(start) ?? throw new InvalidOperationException("cc did not start: these tests need a C compiler (apt-get install -y gcc)");
        var errors = compiler.StandardError.ReadToEnd();
        compiler.WaitForExit();
        Assert.True(compiler.ExitCode == 0, $"cc failed on {source}: {errors}");
        return library;
    }

    /// <summary>The probe's reports: each from its LOCKDROP line to its LOCKDROP-END line, stack included.</summary>
    private static List<string> Reports(string stderr)
    {
        var reports = new List<string>();
        var current = (System.Text.StringBuilder?)null;
        foreach (var line in stderr.Split('\n'))
        {
            if (line.StartsWith("LOCKDROP ", StringComparison.Ordinal))
            {
                current = new System.Text.StringBuilder(line);
            }
            else if (line.StartsWith("LOCKDROP-END", StringComparison.Ordinal) && current is not null)
            {
                reports.Add(current.ToString());
                current = null;
            }
            else
            {
                current?.Append('\n').Append(line);
            }
        }

        return reports;
    }


    [GeneratedRegex(@"CLOSERACE opens=(?<opens>\d+) commits=(?<commits>\d+)")]
    private static partial Regex CloseRaceCounts();
}
