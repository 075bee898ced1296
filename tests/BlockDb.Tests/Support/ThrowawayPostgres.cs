using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace BlockDb.Tests.Support;

/// <summary>
/// The PostgreSQL server the tests start themselves when none is given (<c>BLOCKDB_TEST_POSTGRES</c> not set): the
/// throwaway cluster of <c>eng/postgres.sh</c>, one per checkout, shared by every test process of the run and stopped
/// once the last of them has exited. Test assemblies run side by side in their own processes, so who uses the server is
/// a file of process IDs beside its folder, read and written under an exclusive lock file (<c>flock</c>): the first
/// process starts the server, the others join it. The test host is ended by its runner without running exit handlers,
/// so each process that joins also starts a small detached watcher (<see cref="Watcher"/>) that stops the server, under
/// the same lock, once no process of the file is alive.
/// </summary>
internal static class ThrowawayPostgres
{
    /// <summary>Starts (or joins) the server; returns its connection string, or null and why it could not be had.</summary>
    public static (string? ConnectionString, string? Problem) Acquire()
    {
        try
        {
            return StartOrJoin();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.ComponentModel.Win32Exception)
        {
            return (null, $"the throwaway server could not be started: {e.Message}");
        }
    }

    private static (string? ConnectionString, string? Problem) StartOrJoin()
    {
        if (FindScript() is not { } script)
        {
            return (null, "eng/postgres.sh was not found above the test folder, so no server could be started");
        }

        var dir = Environment.GetEnvironmentVariable("BLOCKDB_PG_DIR") is { Length: > 0 } given
            ? given
            : Path.Combine(Path.GetTempPath(), "blockdb-tests-postgres-" + Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(script)))[..12]);
        string? exports;
        string? problem = null;
        using (Lock(dir))
        {
            var users = LiveUsers(dir);
            exports = Run(script, dir, "env", out _);
            if (exports is null)
            {
                exports = Run(script, dir, "start", out var output);
                problem = exports is null ? $"eng/postgres.sh start failed: {output.Trim()}" : null;
            }

            if (exports is not null)
            {
                File.WriteAllLines(UsersFile(dir), [.. users, Me]);
            }
        }

        if (exports is null)
        {
            return (null, problem);
        }

        var variables = ParseExports(exports);
        foreach (var (name, value) in variables)
        {
            // For this process's children and for the restart test, which runs the script named here.
            Environment.SetEnvironmentVariable(name, value);
        }

        Environment.SetEnvironmentVariable("BLOCKDB_PG_DIR", dir);
        StartWatcher(script, dir);
        return variables.TryGetValue(PostgreSqlServer.Variable, out var connectionString)
            ? (connectionString, null)
            : (null, $"eng/postgres.sh did not print {PostgreSqlServer.Variable}: {exports}");
    }

    /// <summary>
    /// The watcher, a bash script: every second, under the lock, it reads the users file; when no process named there is
    /// alive it stops the server, deletes the file and exits. Detached (its own session, standard streams on /dev/null)
    /// so it outlives the test host and holds none of the runner's pipes.
    /// </summary>
    private const string Watcher = """
        exec </dev/null >/dev/null 2>&1
        dir="$1"; script="$2"
        exec 9>>"$dir.lock"
        while sleep 1; do
          flock 9
          alive=0
          if [ -f "$dir.users" ]; then
            while read -r pid _; do kill -0 "$pid" 2>/dev/null && alive=1; done < "$dir.users"
          fi
          if [ "$alive" = 0 ]; then
            BLOCKDB_PG_DIR="$dir" bash "$script" stop
            rm -f "$dir.users"
            exit 0
          fi
          flock -u 9
        done
        """;

    private static void StartWatcher(string script, string dir)
    {
        var start = new ProcessStartInfo("setsid", ["bash", "-c", Watcher, "watcher", dir, script]) { UseShellExecute = false };
        using var watcher = Process.Start(start);
    }

    /// <summary>This process as the users file names it: its ID and start time, so a reused ID is not taken for it.</summary>
    private static string Me { get; } = Describe(Process.GetCurrentProcess());

    private static string Describe(Process process) =>
        string.Create(CultureInfo.InvariantCulture, $"{process.Id} {process.StartTime.ToUniversalTime().Ticks}");

    private static string UsersFile(string dir) => dir + ".users";

    private static List<string> LiveUsers(string dir)
    {
        if (!File.Exists(UsersFile(dir)))
        {
            return [];
        }

        return [.. File.ReadAllLines(UsersFile(dir)).Where(line =>
        {
            var pid = int.Parse(line.Split(' ')[0], CultureInfo.InvariantCulture);
            try
            {
                using var process = Process.GetProcessById(pid);
                return Describe(process) == line;
            }
            catch (ArgumentException)
            {
                return false; // exited
            }
            catch (InvalidOperationException)
            {
                return false; // exited while being read
            }
        })];
    }

    private const int SharingViolation = 32;

    /// <summary>Holds <c>&lt;dir&gt;.lock</c> exclusively (an advisory lock on Linux), waiting up to 15 minutes (a first start installs PostgreSQL).</summary>
    private static FileStream Lock(string dir)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                return new FileStream(dir + ".lock", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
            }
            catch (IOException e) when ((e.HResult & 0xFFFF) == SharingViolation && deadline.Elapsed < TimeSpan.FromMinutes(15))
            {
                Thread.Sleep(100);
            }
        }
    }

    /// <summary>Runs <c>eng/postgres.sh &lt;verb&gt;</c> on <paramref name="dir"/>; its standard output when it exits 0, else null.</summary>
    private static string? Run(string script, string dir, string verb, out string errors)
    {
        var start = new ProcessStartInfo("bash", [script, verb]) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.Environment["BLOCKDB_PG_DIR"] = dir;
        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        var stdout = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        errors = stderr.Result;
        return process.ExitCode == 0 ? stdout : null;
    }

    private static Dictionary<string, string> ParseExports(string exports) =>
        exports.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Where(line => line.StartsWith("export ", StringComparison.Ordinal) && line.Contains('=', StringComparison.Ordinal))
            .Select(line => line["export ".Length..].Split('=', 2))
            .ToDictionary(pair => pair[0], pair => pair[1].Trim('\''));

    private static string? FindScript()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            var script = Path.Combine(dir.FullName, "eng", "postgres.sh");
            if (File.Exists(script))
            {
                return script;
            }
        }

        return null;
    }
}
