namespace BlockDb.Drivers;

/// <summary>What a path names itself, a final symbolic link not followed (<see cref="FileKey.KindOf"/>).</summary>
internal enum FileKind
{
    /// <summary>Nothing is there.</summary>
    None,

    /// <summary>A regular file.</summary>
    Regular,

    /// <summary>A folder.</summary>
    Directory,

    /// <summary>A symbolic link (whatever it points to).</summary>
    SymbolicLink,

    /// <summary>A FIFO, socket or device: opening one to read may block, and reading it never ends or returns another program's bytes.</summary>
    Special,

    /// <summary>Something that is not a folder or a link, but whether it is a regular file cannot be told here (no <c>statx</c>: a system other than Linux, or a C library older than glibc 2.28).</summary>
    Unknown,
}
