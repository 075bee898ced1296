using System.Runtime.CompilerServices;
using BlockDb.Diagnostics;
using Microsoft.Extensions.Logging;

namespace BlockDb.Engine;

/// <summary>What every call of one session shares: its gate [G1], its commit policy, and what its metrics and logs name.</summary>
/// <param name="gate">The session's gate.</param>
/// <param name="policy">The session's commit policy.</param>
/// <param name="system"><c>sqlite</c> or <c>postgresql</c> (metrics' <c>db.system.name</c>).</param>
/// <param name="provider">The provider's name.</param>
/// <param name="path">The database, for logs.</param>
/// <param name="logger">The database's logger.</param>
internal sealed class CallSite(CallGate gate, CommitPolicy policy, string system, string provider, string path, ILogger logger)
{
    private int _calls;

    public CallGate Gate { get; } = gate;

    public CommitPolicy Policy { get; } = policy;

    /// <summary>The database, for logs and messages (a file path, or a server's host, port and database).</summary>
    public string Path => path;

    /// <summary>The database's logger.</summary>
    public ILogger Logger => logger;

    /// <summary>The refusal of a write on a read-only database: SQLite's result code, or PostgreSQL's SQLSTATE 25006.</summary>
    public BlockDbReadOnlyException ReadOnly(string operation) =>
        system == "postgresql"
            ? new BlockDbReadOnlyException(operation, path, BlockDbReadOnlyException.ReadOnlySqlState)
            : new BlockDbReadOnlyException(operation, path);

    /// <summary>At a call's start: the timestamp to pass to <see cref="End"/> (0 unless this call's duration is sampled).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long Start() => Instruments.StartCall(ref _calls);

    /// <summary>At a call's end, after the gate: counts it and records its duration and failure.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void End(string operation, long started, Exception? failure)
    {
        if (started != 0 || Instruments.Operations.Enabled)
        {
            Instruments.EndCall(system, provider, operation, started, failure);
        }
    }

    /// <summary>After a failed call: a busy engine is logged (event Busy).</summary>
    public void Failed(string operation, Exception failure)
    {
        if (failure is BlockDbException { SqliteErrorCode: SqliteResultCode.Busy })
        {
            Log.Busy(logger, operation, path, failure.Message);
        }
    }
}
