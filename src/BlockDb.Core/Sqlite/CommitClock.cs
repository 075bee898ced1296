using BlockDb.Drivers;

namespace BlockDb.Sqlite;

/// <summary>
/// Counts the commits made through BlockDb to one database file in this process: one clock per file, shared by every
/// open <see cref="IBlockDatabase"/> on it, their sessions and shared sessions. A session's batched read
/// transaction (<see cref="ReadTransaction"/>) is a snapshot; it restarts when this clock moved, so a read never misses what
/// any BlockDb session of this process acknowledged before the read began (read-your-writes inside a process). Other
/// processes' and foreign SQL writers' commits are seen when the snapshot is released
/// (<see cref="BatchingOptions.ReadsPerTransaction"/>, <see cref="BatchingOptions.ReadTransactionMilliseconds"/>).
/// </summary>
/// <remarks>
/// Invariants: a session ticks after its <c>COMMIT</c> succeeded and before the call that committed returns; the
/// registry holds a file's clock while at least one database on it is open (<see cref="Acquire"/> and
/// <see cref="Release"/> under <c>Registry</c>'s lock), so two databases open on one file at once share one clock,
/// whatever paths they opened it by: the registry is keyed by <see cref="FileKey"/> [FK1] (a database acquires its clock once its file exists, so the key is the file's inode on Linux).
/// </remarks>
internal sealed class CommitClock
{
    private static readonly Dictionary<FileKey, CommitClock> Registry = [];
    private readonly FileKey _key;
    private long _value;
    private int _users;

    private CommitClock(FileKey key) => _key = key;

    /// <summary>The number of commits so far.</summary>
    public long Value => Volatile.Read(ref _value);

    /// <summary>The clock of the file at <paramref name="path"/> (it exists), shared with the other databases open on it through any path.</summary>
    public static CommitClock Acquire(string path)
    {
        var key = FileKey.Of(path);
        lock (Registry)
        {
            if (!Registry.TryGetValue(key, out var clock))
            {
                Registry[key] = clock = new CommitClock(key);
            }

            clock._users++;
            return clock;
        }
    }

    /// <summary>Called once by each database that acquired this clock, when it is disposed.</summary>
    public void Release()
    {
        lock (Registry)
        {
            if (--_users == 0)
            {
                Registry.Remove(_key);
            }
        }
    }

    /// <summary>Records one commit.</summary>
    public void Tick() => Interlocked.Increment(ref _value);
}
