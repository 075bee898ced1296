using System.Collections.Concurrent;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.Data.Sqlite;

namespace BlockDb.Bench.DuplicatiReplay;

/// <summary>
/// Measurement aid for the replay (issue 24 profile): with <c>BLOCKDB_REPLAY_TRACE=path</c> set, every connection the
/// duplicati and blockdb-* rows open gets an <c>sqlite3_trace_v2</c> profile hook that counts, per SQL text, the
/// statement runs and their VDBE steps (<c>SQLITE_STMTSTATUS_VM_STEP</c>: deterministic, unlike time), and the totals
/// are written to the path at exit. Off (no hook at all) when the variable is unset.
/// </summary>
internal static partial class StatementTrace
{
    private const uint TraceProfile = 0x02;
    private const int StmtStatusVmStep = 4;
    private const int StmtStatusReprepare = 5;
    private const int StmtStatusRun = 6;

    private static readonly string? OutputPath = Environment.GetEnvironmentVariable("BLOCKDB_REPLAY_TRACE");
    private static readonly ConcurrentDictionary<string, Counter> Counters = new();
    private static readonly TraceCallback Callback = OnTrace;
    private static readonly IntPtr CallbackPointer = Marshal.GetFunctionPointerForDelegate(Callback);
    private static int _hooked;

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    private delegate int TraceCallback(uint type, IntPtr context, IntPtr p, IntPtr x);

    /// <summary>Hooks the connection when tracing is on; returns it.</summary>
    public static SqliteConnection Attach(SqliteConnection connection)
    {
        if (OutputPath is null)
        {
            return connection;
        }

        if (Interlocked.Exchange(ref _hooked, 1) == 0)
        {
            AppDomain.CurrentDomain.ProcessExit += (_, _) => Write();
        }

        var rc = sqlite3_trace_v2(connection.Handle!.DangerousGetHandle(), TraceProfile, CallbackPointer, IntPtr.Zero);
        if (rc != 0)
        {
            throw new InvalidOperationException($"sqlite3_trace_v2 failed: {rc}");
        }

        return connection;
    }

    private static int OnTrace(uint type, IntPtr context, IntPtr p, IntPtr x)
    {
        if (type != TraceProfile)
        {
            return 0;
        }

        var sql = Marshal.PtrToStringUTF8(sqlite3_sql(p)) ?? "?";
        var counter = Counters.GetOrAdd(sql, _ => new Counter());
        counter.Runs++;
        counter.VmSteps += sqlite3_stmt_status(p, StmtStatusVmStep, 1);
        counter.Nanoseconds += Marshal.ReadInt64(x);
        var runsOfThisObject = sqlite3_stmt_status(p, StmtStatusRun, 0);
        if (runsOfThisObject <= 1)
        {
            counter.FirstRunsOfAnObject++; // a statement object run once so far: prepared for this run (or its first)
        }

        counter.Reprepares = Math.Max(counter.Reprepares, sqlite3_stmt_status(p, StmtStatusReprepare, 0));
        return 0;
    }

    private static void Write()
    {
        var text = new StringBuilder();
        text.AppendLine("runs\tvm_steps\tfirst_runs_of_an_object\tms\tsql");
        foreach (var (sql, c) in Counters.OrderByDescending(kv => kv.Value.VmSteps))
        {
            text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"{c.Runs}\t{c.VmSteps}\t{c.FirstRunsOfAnObject}\t{c.Nanoseconds / 1e6:F0}\t{Whitespace().Replace(sql, " ").Trim()}"));
        }

        File.WriteAllText(OutputPath!, text.ToString());
    }

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern int sqlite3_trace_v2(IntPtr db, uint mask, IntPtr callback, IntPtr context);

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern IntPtr sqlite3_sql(IntPtr stmt);

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern int sqlite3_stmt_status(IntPtr stmt, int op, int reset);

    [GeneratedRegex(@"\s+")]
    private static partial Regex Whitespace();

    private sealed class Counter
    {
        public long Runs;
        public long VmSteps;
        public long FirstRunsOfAnObject;
        public long Nanoseconds;
        public int Reprepares;
    }
}
