using System.Diagnostics;
using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Stress;

/// <summary>
/// The close race in one process: connections that open, read and close the file on some threads while other
/// threads' connections take and release write locks, through BlockDb's drivers (every provider named, round robin).
/// Run under the <c>lockdrop</c> probe (tests/BlockDb.Tests/CloseGuard/Native/lockdrop.c, LD_PRELOAD), which reports every close
/// of the file while the process holds a lock on it. It starts with one deliberate such close, by .NET and not by
/// SQLite, so a run shows the probe is watching; every other report is a close that dropped a lock. It runs for the
/// duration asked, and on until there were at least <see cref="Enough"/> opens and commits to race (a loaded machine,
/// or a provider whose open is slower, gets them later), up to ten times the duration.
/// </summary>
public static class CloseRace
{
    /// <summary>The opens and the commits a run goes on for, beyond its duration, so there are closes to race (CloseGuardTests asks for as many).</summary>
    public const int Enough = 100;

    internal static int Run(string path, IReadOnlyList<string> providers, TimeSpan duration)
    {
        var drivers = providers.Select(ProviderCatalog.SqliteDriver).ToList();
        using (var setup = drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, 5000)))
        {
            setup.Execute("PRAGMA journal_mode = DELETE");
            setup.Execute("CREATE TABLE IF NOT EXISTS \"Item\" (\"ID\" INTEGER PRIMARY KEY, \"Value\" INTEGER NOT NULL)");
            using var holder = drivers[0].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 5000));
            holder.Execute("BEGIN IMMEDIATE");
            File.OpenHandle(path, FileMode.Open, FileAccess.Read).Dispose();
            holder.Execute("ROLLBACK");
            Output.Line("CONTROL closed a descriptor of the file while a write transaction held its lock");
        }

        var start = Stopwatch.GetTimestamp();
        var deadline = start + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        var cap = start + (long)(10 * duration.TotalSeconds * Stopwatch.Frequency);
        long opens = 0, commits = 0, busy = 0;
        bool Running()
        {
            var now = Stopwatch.GetTimestamp();
            return now < deadline || (now < cap && (Interlocked.Read(ref opens) < Enough || Interlocked.Read(ref commits) < Enough));
        }

        var threads = new List<Thread>();
        for (var i = 0; i < drivers.Count; i++)
        {
            var driver = drivers[i];
            var random = new Random(i);
            threads.Add(new Thread(() =>
            {
                using var connection = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 5000));
                connection.Execute("PRAGMA busy_timeout = 5000");
                while (Running())
                {
                    try
                    {
                        connection.Execute("BEGIN IMMEDIATE");
                        connection.Execute("INSERT INTO \"Item\" (\"Value\") VALUES (1)");
                        connection.Execute("COMMIT");
                        Interlocked.Increment(ref commits);

                        // Short pauses: the process holds no lock for moments, as in a backup engine's idle gaps,
                        // and takes one again soon after; a close in such a moment is the one that races.
                        Thread.Sleep(random.Next(2));
                    }
                    catch (BlockDbException e) when (e.IsTransient)
                    {
                        Interlocked.Increment(ref busy);
                        if (connection.InTransaction)
                        {
                            connection.Execute("ROLLBACK");
                        }
                    }
                }
            }));
        }

        for (var i = 0; i < 3; i++)
        {
            var seed = i;
            threads.Add(new Thread(() =>
            {
                var round = seed;
                while (Running())
                {
                    try
                    {
                        // Opening opens the file; most rounds close it again at once, some read first.
                        using var connection = drivers[round % drivers.Count].Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 5000));
                        if (round++ % 8 == 0)
                        {
                            connection.Execute("PRAGMA busy_timeout = 5000");
                            connection.QueryText("SELECT COUNT(*) FROM \"Item\"");
                        }

                        Interlocked.Increment(ref opens);
                    }
                    catch (BlockDbException e) when (e.IsTransient)
                    {
                        Interlocked.Increment(ref busy);
                    }
                }
            }));
        }

        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Output.Line(string.Create(CultureInfo.InvariantCulture, $"CLOSERACE opens={opens} commits={commits} busy={busy}"));
        return 0;
    }

    /// <summary>
    /// What a close costs: <paramref name="rounds"/> opens and closes of a connection (each runs one read first), with
    /// the file otherwise unopened in the process, then with a second connection held open beside them; prints the
    /// mean microseconds per open-read-close of each.
    /// </summary>
    internal static int Cost(string path, string provider, int rounds)
    {
        var driver = ProviderCatalog.SqliteDriver(provider);
        using (var setup = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate, 1000)))
        {
            setup.Execute("CREATE TABLE IF NOT EXISTS \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        var alone = Cycle(driver, path, rounds);
        using var other = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000));
        other.QueryText("SELECT COUNT(*) FROM \"Item\"");
        var beside = Cycle(driver, path, rounds);
        Output.Line(string.Create(CultureInfo.InvariantCulture, $"CLOSECOST {provider} alone {alone:F1} us beside another connection {beside:F1} us"));
        return 0;
    }

    private static double Cycle(ISqliteDriver driver, string path, int rounds)
    {
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < rounds; i++)
        {
            using var connection = driver.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000));
            connection.QueryText("SELECT COUNT(*) FROM \"Item\"");
        }

        return clock.Elapsed.TotalMicroseconds / rounds;
    }
}
