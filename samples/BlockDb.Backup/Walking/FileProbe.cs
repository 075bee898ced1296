using System.Runtime.InteropServices;

namespace BlockDb.Backup.Walking;

/// <summary>What a directory entry is, from <c>lstat</c> (symbolic links are not followed).</summary>
internal enum FileKind
{
    Regular,
    Directory,
    Symlink,

    /// <summary>A FIFO, socket, or character or block device: opening one could block or never end.</summary>
    Special,

    /// <summary>Gone, or its metadata cannot be read.</summary>
    Unreadable,
}

/// <summary>
/// Finds an entry's type and size without opening it. .NET's <see cref="FileSystemInfo"/> does not tell a FIFO or a
/// device from a regular file, so on Linux this calls <c>statx(2)</c>, whose buffer layout is the same on every
/// architecture; elsewhere (or without <c>statx</c>) it falls back to <see cref="FileInfo"/>.
/// </summary>
internal static partial class FileProbe
{
    private const int AtFdCwd = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const uint StatxType = 0x1;
    private const uint StatxSize = 0x200;
    private const int StatxBufferSize = 256;
    private const int ModeOffset = 28;
    private const int SizeOffset = 40;
    private const int TypeMask = 0xF000;
    private const int TypeRegular = 0x8000;
    private const int TypeDirectory = 0x4000;
    private const int TypeSymlink = 0xA000;

    private static bool s_useStatx = OperatingSystem.IsLinux();

    public static (FileKind Kind, long Size) Probe(string path)
    {
        if (s_useStatx)
        {
            try
            {
                return ProbeStatx(path);
            }
            catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
            {
                s_useStatx = false;
            }
        }

        return ProbeManaged(path);
    }

    private static unsafe (FileKind Kind, long Size) ProbeStatx(string path)
    {
        var buffer = stackalloc byte[StatxBufferSize];
        if (Statx(AtFdCwd, path, AtSymlinkNoFollow, StatxType | StatxSize, buffer) != 0)
        {
            return (FileKind.Unreadable, 0);
        }

        // struct statx (native byte order): stx_mode is a u16 at offset 28, stx_size a u64 at offset 40.
        var span = new ReadOnlySpan<byte>(buffer, StatxBufferSize);
        var mode = MemoryMarshal.Read<ushort>(span[ModeOffset..]);
        var size = (long)MemoryMarshal.Read<ulong>(span[SizeOffset..]);

        return (mode & TypeMask) switch
        {
            TypeRegular => (FileKind.Regular, size),
            TypeDirectory => (FileKind.Directory, 0),
            TypeSymlink => (FileKind.Symlink, 0),
            _ => (FileKind.Special, 0),
        };
    }

    private static (FileKind Kind, long Size) ProbeManaged(string path)
    {
        try
        {
            var info = new FileInfo(path);
            if (!info.Exists)
            {
                return Directory.Exists(path) ? (FileKind.Directory, 0) : (FileKind.Unreadable, 0);
            }

            return info.LinkTarget is not null ? (FileKind.Symlink, 0) : (FileKind.Regular, info.Length);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return (FileKind.Unreadable, 0);
        }
    }

    [LibraryImport("libc", EntryPoint = "statx", StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int Statx(int dirFd, string path, int flags, uint mask, byte* buffer);
}
