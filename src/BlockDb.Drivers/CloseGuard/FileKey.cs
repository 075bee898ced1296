namespace BlockDb.Drivers;

/// <summary>
/// One key for "the same file" in this process, for every registry kept per database file (the commit clock that ends
/// read snapshots, <see cref="SqliteCloseGuard"/>'s gates): on Linux the file's device and inode once it exists, which
/// every path to it shares (a symbolic link to the file or along its folders, a hard link, <c>..</c>); otherwise (no
/// file yet, another system, or the file could not be stat'ed) its full path with every symbolic link resolved.
/// </summary>
/// <remarks>
/// Invariant [FK1] (docs/ARCHITECTURE.md): a registry takes an entry's key when it
/// makes the entry and keeps it while the entry lives. An inode number names one file while that file exists or a
/// descriptor of it is open; a number freed by a deletion may be given to a new file, which then shares a stale entry
/// (harmless for both registries: a clock ticked by two files restarts snapshots more often, a gate shared by two
/// files orders more closes). A file whose key changes from its path to its inode when it is created is the one case
/// a registry must handle itself (<see cref="SqliteCloseGuard"/> creates a file under its registry's lock).
/// </remarks>
internal readonly struct FileKey : IEquatable<FileKey>
{
    private static readonly StringComparer PathComparer = OperatingSystem.IsWindows() ? StringComparer.OrdinalIgnoreCase : StringComparer.Ordinal;
    private readonly ulong _device;
    private readonly ulong _inode;
    private readonly string? _path;

    private FileKey(ulong device, ulong inode, string? path) => (_device, _inode, _path) = (device, inode, path);

    /// <summary>Whether the key is the file's device and inode (it exists, on Linux), rather than a path.</summary>
    public bool IsInode => _path is null && _inode != 0;

    /// <summary>The key of the file <paramref name="path"/> names (relative paths from the working folder).</summary>
    /// <param name="path">A file's path; it need not exist.</param>
    /// <returns>The file's device and inode when it exists and Linux says so; else its full path with every symbolic link resolved.</returns>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or not a valid path.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    public static FileKey Of(string path) => Of(path, out _);

    /// <summary>The key of the file <paramref name="path"/> names, and whether the key will change to its inode once the file is created (Linux says no file is there, links followed).</summary>
    internal static FileKey Of(string path, out bool becomesInode)
    {
        ArgumentNullException.ThrowIfNull(path);
        var full = Path.GetFullPath(path);
        if (LinuxStat.TryStat(full, followLinks: true, out var status, out becomesInode))
        {
            return new FileKey(status.Device, status.Inode, null);
        }

        try
        {
            return new FileKey(0, 0, RealPath(full));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // An unreadable link or folder: SQLite's own open reports it; the path is the key meanwhile.
            return new FileKey(0, 0, full);
        }
    }

    /// <summary>What <paramref name="path"/> names itself, a final symbolic link not followed (as <c>lstat(2)</c>).</summary>
    /// <param name="path">Any path.</param>
    /// <returns>The kind; <see cref="FileKind.Unknown"/> for a file that may or may not be regular where Linux's <c>statx</c> is not available.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    public static FileKind KindOf(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (LinuxStat.TryStat(path, followLinks: false, out var status, out var missing))
        {
            return status.Type switch
            {
                LinuxStat.RegularType => FileKind.Regular,
                LinuxStat.DirectoryType => FileKind.Directory,
                LinuxStat.LinkType => FileKind.SymbolicLink,
                _ => FileKind.Special,
            };
        }

        if (missing)
        {
            return FileKind.None;
        }

        // No statx: .NET tells links and folders (lstat), not a FIFO from a regular file.
        var info = new FileInfo(path);
        if (info.LinkTarget is not null)
        {
            return FileKind.SymbolicLink;
        }

        return Directory.Exists(path) ? FileKind.Directory : info.Exists ? FileKind.Unknown : FileKind.None;
    }

    /// <inheritdoc />
    public bool Equals(FileKey other) =>
        _device == other._device && _inode == other._inode && (_path is null ? other._path is null : other._path is not null && PathComparer.Equals(_path, other._path));

    /// <inheritdoc />
    public override bool Equals(object? obj) => obj is FileKey other && Equals(other);

    /// <inheritdoc />
    public override int GetHashCode() => _path is null ? HashCode.Combine(_device, _inode) : PathComparer.GetHashCode(_path);

    /// <summary>Equality of two keys: the same file.</summary>
    public static bool operator ==(FileKey left, FileKey right) => left.Equals(right);

    /// <summary>Inequality of two keys.</summary>
    public static bool operator !=(FileKey left, FileKey right) => !left.Equals(right);

    /// <summary>The device and inode (<c>device:inode</c>), or the path.</summary>
    public override string ToString() => _path ?? $"{_device >> 32}:{_device & uint.MaxValue}:{_inode}";

    /// <summary>
    /// The full path with every symbolic link along it resolved, folders and the file itself (as realpath(3) does):
    /// a file opened through a linked folder and through its own path gets one key. After 40 links (a loop), the
    /// path as given.
    /// </summary>
    private static string RealPath(string full)
    {
        var root = Path.GetPathRoot(full) ?? "/";
        var parts = full[root.Length..].Split(Path.DirectorySeparatorChar, StringSplitOptions.RemoveEmptyEntries);
        var resolved = root;
        for (int i = 0, links = 0; i < parts.Length; i++)
        {
            var next = Path.Combine(resolved, parts[i]);
            if (new FileInfo(next).LinkTarget is not { } target)
            {
                resolved = next;
                continue;
            }

            if (++links > 40)
            {
                return full;
            }

            // Start again from the link's target, with the rest of the path after it.
            var restarted = Path.Combine([Path.GetFullPath(target, resolved), .. parts[(i + 1)..]]);
            root = Path.GetPathRoot(restarted) ?? "/";
            parts = restarted[root.Length..].Split(Path.DirectorySeparatorChar, StringSplitOptions.RemoveEmptyEntries);
            resolved = root;
            i = -1;
        }

        return resolved;
    }
}
