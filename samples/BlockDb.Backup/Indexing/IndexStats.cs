namespace BlockDb.Backup.Indexing;

/// <summary>Counters of an index run, written by the walker and the writer, read by the progress display.</summary>
internal sealed class IndexStats
{
    private long _filesFound;
    private long _bytesFound;
    private long _filesIndexed;
    private long _bytes;
    private long _blocks;
    private long _newBlocks;
    private long _newBytes;
    private long _empty;
    private long _newBlocklistBlocks;
    private long _reusedBlocksets;
    private long _newBlocksets;
    private long _volumes;
    private long _symlinks;
    private long _special;
    private long _unreadable;
    private long _ownFiles;
    private long _pseudoDirectories;

    /// <summary>Regular files the walker found (indexed, empty or unreadable in the end).</summary>
    public long FilesFound => Interlocked.Read(ref _filesFound);

    public long BytesFound => Interlocked.Read(ref _bytesFound);

    /// <summary>Files recorded, each as a blockset (new or reused), empty files included.</summary>
    public long FilesIndexed => Interlocked.Read(ref _filesIndexed);

    /// <summary>Bytes in the files recorded.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Blocks in the files recorded, counting repeats (= BlocksetEntry rows added).</summary>
    public long Blocks => Interlocked.Read(ref _blocks);

    /// <summary>Blocks that were new to the index (= Block rows added).</summary>
    public long NewBlocks => Interlocked.Read(ref _newBlocks);

    /// <summary>Bytes in the new blocks: what a backup would upload.</summary>
    public long NewBytes => Interlocked.Read(ref _newBytes);

    /// <summary>Blocklist blocks new to a Duplicati database (Block rows added besides <see cref="NewBlocks"/>; their bytes are in no file).</summary>
    public long NewBlocklistBlocks => Interlocked.Read(ref _newBlocklistBlocks);

    /// <summary>Empty regular files: recorded as a blockset of length 0 with no blocks.</summary>
    public long Empty => Interlocked.Read(ref _empty);

    /// <summary>Files whose content was already a blockset (<c>FindBlocksetAsync</c> by full hash and length), which they reuse.</summary>
    public long ReusedBlocksets => Interlocked.Read(ref _reusedBlocksets);

    /// <summary>Blocksets added (= Blockset rows added).</summary>
    public long NewBlocksets => Interlocked.Read(ref _newBlocksets);

    /// <summary>Volumes started for new blocks.</summary>
    public long Volumes => Interlocked.Read(ref _volumes);

    public long Symlinks => Interlocked.Read(ref _symlinks);

    public long Special => Interlocked.Read(ref _special);

    /// <summary>Files and folders that could not be read (or vanished).</summary>
    public long Unreadable => Interlocked.Read(ref _unreadable);

    /// <summary>The database's own files (db, -wal, -shm, sidecar, record), when they lie in the tree.</summary>
    public long OwnFiles => Interlocked.Read(ref _ownFiles);

    /// <summary>Mount points of pseudo file systems (proc, sysfs…) not entered.</summary>
    public long PseudoDirectories => Interlocked.Read(ref _pseudoDirectories);

    public long Skipped => Symlinks + Special + Unreadable + OwnFiles;

    public void AddFound(long length)
    {
        Interlocked.Increment(ref _filesFound);
        Interlocked.Add(ref _bytesFound, length);
    }

    public void AddNewBlock(long size)
    {
        Interlocked.Increment(ref _newBlocks);
        Interlocked.Add(ref _newBytes, size);
    }

    public void AddNewBlocklistBlock() => Interlocked.Increment(ref _newBlocklistBlocks);

    /// <summary>Counts a file recorded: as a new blockset, or reusing one.</summary>
    public void AddIndexed(long length, int blocks, bool reused)
    {
        Interlocked.Increment(ref _filesIndexed);
        Interlocked.Add(ref _bytes, length);
        Interlocked.Add(ref _blocks, blocks);
        Interlocked.Increment(ref reused ? ref _reusedBlocksets : ref _newBlocksets);
        if (length == 0)
        {
            Interlocked.Increment(ref _empty);
        }
    }

    public void AddVolume() => Interlocked.Increment(ref _volumes);

    public void AddSymlink() => Interlocked.Increment(ref _symlinks);

    public void AddSpecial() => Interlocked.Increment(ref _special);

    public void AddUnreadable() => Interlocked.Increment(ref _unreadable);

    public void AddOwnFile() => Interlocked.Increment(ref _ownFiles);

    public void AddPseudoDirectory() => Interlocked.Increment(ref _pseudoDirectories);
}
