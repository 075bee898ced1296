using BlockDb.Drivers;

namespace BlockDb.Sqlite;

/// <summary>
/// Whether the WAL file a session's connection writes its commits to is still the database's <c>&lt;database&gt;-wal</c> [W1].
/// SQLite keeps writing to the WAL it opened after that file was deleted or replaced, and nothing tells the writer; the
/// commits then live only in a file no one else can find, and are lost when the last connection closes
/// (<see href="https://www.sqlite.org/howtocorrupt.html#_deleting_a_hot_journal"/>; docs/RELIABILITY.md, "WAL deleted
/// under a writer"). Owned by one session's <see cref="SqliteTransaction"/>, used inside its gate.
/// </summary>
/// <remarks>
/// The connection opens its WAL at its first read and keeps it while it is open (no other connection can delete it
/// meanwhile: SQLite deletes the WAL only at the last close). <see cref="Record"/> takes the file's <see cref="FileKey"/>
/// under the session's first write lock; <see cref="Unchanged"/> compares before each <c>COMMIT</c>: one <c>statx</c>.
/// Where the inode cannot be known (no Linux <c>statx</c>), only a deletion is seen (the file no longer exists).
/// </remarks>
internal sealed class WalWatch(string databasePath)
{
    private readonly string _path = Path.GetFullPath(databasePath + "-wal");
    private FileKey? _opened;
    private bool _recorded;

    /// <summary>The WAL file's path.</summary>
    public string WalPath => _path;

    /// <summary>Records the WAL the connection has open, once (called with the write lock held, so its WAL is open).</summary>
    public void Record()
    {
        if (!_recorded)
        {
            _recorded = true;
            _opened = FileKey.Of(_path) is { IsInode: true } key ? key : null;
        }
    }

    /// <summary>Whether the file at <see cref="WalPath"/> is still the one recorded (or, with no inode known, still exists).</summary>
    public bool Unchanged() => _opened is { } key ? FileKey.Of(_path) == key : File.Exists(_path);
}
