using System.CommandLine;
using System.Globalization;

namespace BlockDb.Bench.Server;

/// <summary>
/// <c>server</c>: the PostgreSQL provider against a SQLite provider on the same workloads through the public API, the
/// shared session's design choice (pooled connections versus a group commit), bulk import by COPY, and the
/// many-writers study; with <c>--tasks</c> only the gathered-writers study (<see cref="GatheringStudy"/>). Needs a server: <c>eval "$(eng/postgres.sh start)"</c> sets <c>BLOCKDB_TEST_POSTGRES</c>.
/// <c>server-worker</c> is the writer process the study starts.
/// </summary>
internal static class ServerCommand
{
    public static Command Create()
    {
        var smoke = new Option<bool>("--smoke") { Description = "Seconds: small counts, writers 1 and 4; exits 1 on any failure (CI)." };
        var connection = new Option<string?>("--connection") { Description = "Npgsql connection string (default $BLOCKDB_TEST_POSTGRES)." };
        var ops = new Option<int?>("--ops") { Description = "Blocks per workload and per writer (default 20000)." };
        var writers = new Option<int[]>("--writers") { Description = "Writer processes of the many-writers study (default 1 4 16).", AllowMultipleArgumentsPerToken = true };
        var commitEvery = new Option<int?>("--commit-every") { Description = "CommitEvery of each writer process (default 100)." };
        var sqlite = new Option<string?>("--sqlite") { Description = "The SQLite provider compared (default PInvoke)." };
        var tasks = new Option<int[]>("--tasks") { Description = "Only the gathered-writers study: tasks on one shared session per row (e.g. 1 4 16).", AllowMultipleArgumentsPerToken = true };
        var files = new Option<int?>("--files") { Description = "With --tasks: also the indexing run of this many one-call files from 8 tasks (issue 25: 66026)." };
        var command = new Command("server", "PostgreSQL vs SQLite on the same workloads, shared-session design, COPY import, 1/4/16 writer processes.")
        {
            smoke, connection, ops, writers, commitEvery, sqlite, tasks, files,
        };
        command.SetAction(async (result, cancellationToken) =>
        {
            var admin = result.GetValue(connection) ?? Environment.GetEnvironmentVariable("BLOCKDB_TEST_POSTGRES");
            if (string.IsNullOrEmpty(admin))
            {
                Console.Error.WriteLine("No server: start one with eval \"$(eng/postgres.sh start)\" or pass --connection.");
                return 1;
            }

            var isSmoke = result.GetValue(smoke);
            var settings = new ServerStudy.Settings(
                admin,
                result.GetValue(sqlite) ?? "PInvoke",
                result.GetValue(ops) ?? (isSmoke ? 2000 : 20_000),
                result.GetValue(writers) is { Length: > 0 } w ? w : isSmoke ? [1, 4] : [1, 4, 16],
                result.GetValue(commitEvery) ?? 100,
                isSmoke ? 10_000 : 200_000);
            try
            {
                if (result.GetValue(tasks) is { Length: > 0 } taskCounts)
                {
                    await GatheringStudy.RunAsync(settings, taskCounts, result.GetValue(files) ?? 0, Console.Out);
                }
                else
                {
                    await ServerStudy.RunAsync(settings, Console.Out);
                }

                return 0;
            }
            catch (Exception e) when (e is BlockDbException or InvalidOperationException or IOException)
            {
                Console.Error.WriteLine($"server study failed: {e}");
                return 1;
            }
        });
        return command;
    }

    public static Command CreateWorker()
    {
        var args = new Argument<string[]>("args") { Arity = new ArgumentArity(5, 5) };
        var command = new Command("server-worker", "A writer process of the many-writers study (started by 'server').") { args };
        command.Hidden = true;
        command.SetAction((result, _) =>
        {
            var a = result.GetValue(args)!;
            return WriterWorker.RunAsync(a[0], Int(a[1]), Int(a[2]), Int(a[3]), a[4]);
        });
        return command;
    }

    private static int Int(string text) => int.Parse(text, CultureInfo.InvariantCulture);
}
