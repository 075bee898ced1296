using System.Globalization;
using BlockDb;
using BlockDb.Opening;
using BlockDb.Stress;

// Usage:
//   worker  <db> <provider> <journal> <seconds> <seed>   one stress worker process (started by the orchestrator)
//   foreign <db> <provider> <journal> <seconds> <seed>   the foreign SQL writer (started by the orchestrator)
//   soak [seconds] [providers,...] [journal] [workers] [kill-every-seconds]
//                                                        a long run: prints the report; exit 1 when anything failed
//   measure [blocks] [repetitions]                        the issue-10 measurements (map load, same-prefix lookups, opens)
//   open <db> <provider> <startAtUtcTicks>                one first open at a given moment (started by measure)
//   closerace <db> <providers,...> <seconds>              connections closing beside others' locks (run under lockdrop.so)
//   closecost <db> <provider> <rounds>                    microseconds per open-read-close, alone and beside another connection
//   closelog <db> <provider>                              SQLite's error log around closes (ProviderProbe.CloseLog)
//   tryopen <db> <provider>                               open an index and read the native version, printing any error
//   stackprobe [provider] [blocks]                        the BlockDb frames between a select-xor-insert and its statements (hit, miss)
//   fill <provider> <db> <blocks>                         a KeyMap file of that many blocks, for ops
//   ops <provider> <db> <blocks> <find|sxi|sxi-hit|shared-sxi|shared-sxi-hit|file-sxi|file-one> <count>
//                                                        a fixed number of hot-path calls (bench/callgrind-ops.sh counts instructions)
if (args.Length >= 1 && args[0] == "measure")
{
    return await Measure.RunAsync(
        args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 1_000_000,
        args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 3);
}

if (args.Length == 4 && args[0] == "open")
{
    return await Measure.OpenOnceAsync(args[1], args[2], long.Parse(args[3], CultureInfo.InvariantCulture));
}

if (args.Length == 4 && args[0] == "closerace")
{
    return CloseRace.Run(args[1], args[2].Split(','), TimeSpan.FromSeconds(double.Parse(args[3], CultureInfo.InvariantCulture)));
}

if (args.Length == 4 && args[0] == "closecost")
{
    return CloseRace.Cost(args[1], args[2], int.Parse(args[3], CultureInfo.InvariantCulture));
}

if (args is ["closelog", var logPath, var logProvider])
{
    return ProviderProbe.CloseLog(logPath, logProvider);
}

if (args is ["tryopen", var openPath, var openProvider])
{
    return await ProviderProbe.OpenAsync(openPath, openProvider);
}

if (args.Length >= 1 && args[0] == "stackprobe")
{
    return await StackProbe.RunAsync(
        args.Length > 1 ? args[1] : ProviderCatalog.PInvoke,
        args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 20_000);
}

// import PROVIDER PATH BLOCKS PER_TRANSACTION: a rebuild into a new KeyMap file (issue 25 item 2).
if (args is ["import", var importProvider, var importPath, var importBlocks, var perTransaction])
{
    return await OpCount.ImportAsync(importProvider, importPath, int.Parse(importBlocks, CultureInfo.InvariantCulture), int.Parse(perTransaction, CultureInfo.InvariantCulture));
}

// fill/ops [layout]: KeyMap unless a layout is named (TextHash, BlobHash, Duplicati).
if (args is ["fill", var fillProvider, var fillPath, var fillBlocks, .. var fillLayout] && fillLayout.Length <= 1)
{
    return await OpCount.FillAsync(fillProvider, fillPath, int.Parse(fillBlocks, CultureInfo.InvariantCulture), fillLayout is [var l] ? Enum.Parse<BlockLayout>(l, ignoreCase: true) : BlockLayout.KeyMap);
}

if (args is ["ops", var opsProvider, var opsPath, var opsBlocks, var operation, var opsCount, .. var opsLayout] && opsLayout.Length <= 1)
{
    if (operation.StartsWith("file-", StringComparison.Ordinal))
    {
        return await FileOps.RunAsync(
            opsProvider, opsPath, int.Parse(opsBlocks, CultureInfo.InvariantCulture), operation, int.Parse(opsCount, CultureInfo.InvariantCulture),
            opsLayout is [var fl] ? Enum.Parse<BlockLayout>(fl, ignoreCase: true) : BlockLayout.KeyMap);
    }

    return await OpCount.RunAsync(
        opsProvider, opsPath, int.Parse(opsBlocks, CultureInfo.InvariantCulture), operation, int.Parse(opsCount, CultureInfo.InvariantCulture),
        opsLayout is [var l] ? Enum.Parse<BlockLayout>(l, ignoreCase: true) : BlockLayout.KeyMap);
}

if (args.Length >= 1 && args[0] == "soak")
{
    var seconds = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 600;
    var providers = args.Length > 2 ? args[2].Split(',') : [.. ProviderCatalog.SqliteNames];
    var journal = args.Length > 3 ? Enum.Parse<JournalMode>(args[3], ignoreCase: true) : JournalMode.Wal;
    var workers = args.Length > 4 ? int.Parse(args[4], CultureInfo.InvariantCulture) : 4;
    var killEvery = args.Length > 5 ? double.Parse(args[5], CultureInfo.InvariantCulture) : 2.0;
    var folder = Path.Combine(Path.GetTempPath(), "blockdb-soak", $"{DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture)}-{Environment.ProcessId}");
    var report = await StressRun.RunAsync(
        new StressOptions(folder, providers, TimeSpan.FromSeconds(seconds), workers, journal, Environment.TickCount, killEvery), Console.WriteLine);
    return report.Failures.Count == 0 ? 0 : 1;
}

if (args.Length != 6)
{
    Console.Error.WriteLine("usage: worker|foreign <db> <provider> <journal> <seconds> <seed> | soak [seconds] [providers] [journal] [workers] [kill-every-seconds]");
    return 2;
}

var (role, path, provider) = (args[0], args[1], args[2]);
var mode = Enum.Parse<JournalMode>(args[3]);
var duration = TimeSpan.FromSeconds(double.Parse(args[4], CultureInfo.InvariantCulture));
var seed = int.Parse(args[5], CultureInfo.InvariantCulture);
SqliteLog.Start(role);
return role switch
{
    "worker" => await new StressWorker(path, provider, mode, duration, seed).RunAsync(),
    "foreign" => new ForeignWriter(path, duration, seed).Run(),
    _ => 2,
};
