using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Sessions;

namespace BlockDb.Sqlite;

/// <summary>What a session's write transaction reports of its ends: the commit and rollback metrics, and the slow-commit and rolled-back logs.</summary>
internal sealed class TransactionMetrics(SessionSettings settings)
{
    /// <summary>A slower <c>COMMIT</c> than this is logged (event 20, SlowCommit).</summary>
    public const int SlowCommitMilliseconds = 1000;

    private readonly TagList _tags = new() { { "db.system.name", "sqlite" }, { "blockdb.provider", settings.Provider } };

    /// <summary>A <c>COMMIT</c> of <paramref name="writes"/> writes took <paramref name="elapsed"/>.</summary>
    public void Committed(int writes, TimeSpan elapsed)
    {
        if (Instruments.Commits.Enabled)
        {
            Instruments.Commits.Add(1, _tags);
        }

        if (Instruments.CommitDuration.Enabled)
        {
            Instruments.CommitDuration.Record(elapsed.TotalSeconds, _tags);
        }

        if (Instruments.CommitWrites.Enabled)
        {
            Instruments.CommitWrites.Record(writes, _tags);
        }

        if (elapsed.TotalMilliseconds > SlowCommitMilliseconds)
        {
            Log.SlowCommit(settings.Logger, writes, settings.Path, (long)elapsed.TotalMilliseconds, SlowCommitMilliseconds);
        }
    }

    /// <summary>A transaction of <paramref name="writes"/> writes was rolled back for <paramref name="reason"/>; logged when it was a failure.</summary>
    public void Rolled(string reason, int writes, Exception? error)
    {
        if (Instruments.Rollbacks.Enabled)
        {
            var tags = _tags;
            tags.Add("blockdb.reason", reason);
            Instruments.Rollbacks.Add(1, tags);
        }

        if (error is not null)
        {
            Log.BatchRolledBack(settings.Logger, writes, settings.Path, reason, error.Message);
        }
    }
}
