using System.Runtime.InteropServices;

namespace BlockDb.Drivers;

/// <summary>
/// Linux's <c>statx(2)</c>, through the C library (glibc 2.28 and later, musl 1.2.5 and later): a path's device, inode
/// and file type. Its <c>struct statx</c> has one layout on every Linux architecture, unlike <c>struct stat</c>, so no
/// per-architecture offsets are needed (<see href="https://man7.org/linux/man-pages/man2/statx.2.html"/>). Elsewhere, or
/// with an older C library, <see cref="TryStat"/> says it cannot tell and callers fall back to paths.
/// </summary>
internal static unsafe partial class LinuxStat
{
    private const int AtFdCwd = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const uint StatxType = 0x1;
    private const uint StatxIno = 0x100;
    private const int BufferBytes = 256;
    private const int ENOENT = 2;
    private const int ENOTDIR = 20;

    // Offsets in struct statx (linux/stat.h).
    private const int MaskOffset = 0;
    private const int ModeOffset = 28;
    private const int InodeOffset = 32;
    private const int DeviceMajorOffset = 136;
    private const int DeviceMinorOffset = 140;

    private static volatile bool s_unavailable = !OperatingSystem.IsLinux();

    /// <summary>The file type bits of a mode (<c>S_IFMT</c>) and its values.</summary>
    internal const int TypeMask = 0xF000;
    internal const int RegularType = 0x8000;
    internal const int DirectoryType = 0x4000;
    internal const int LinkType = 0xA000;

    /// <summary>What the kernel says of a path.</summary>
    internal readonly record struct Status(ulong Device, ulong Inode, int Type);

    /// <summary>
    /// Stats <paramref name="path"/> (following a final symbolic link when <paramref name="followLinks"/>).
    /// True with the status; false with <paramref name="missing"/> true when nothing is there (ENOENT, ENOTDIR);
    /// false with <paramref name="missing"/> false when it cannot tell (not Linux, no <c>statx</c> in the C library, or
    /// another error such as a folder it may not search).
    /// </summary>
    public static bool TryStat(string path, bool followLinks, out Status status, out bool missing)
    {
        status = default;
        missing = false;
        if (s_unavailable)
        {
            return false;
        }

        byte* buffer = stackalloc byte[BufferBytes];
        int rc;
        try
        {
            rc = Statx(AtFdCwd, path, followLinks ? 0 : AtSymlinkNoFollow, StatxType | StatxIno, buffer);
        }
        catch (Exception e) when (e is EntryPointNotFoundException or DllNotFoundException)
        {
            s_unavailable = true;
            return false;
        }

        if (rc != 0)
        {
            var errno = Marshal.GetLastPInvokeError();
            missing = errno is ENOENT or ENOTDIR;
            return false;
        }

        if ((*(uint*)(buffer + MaskOffset) & (StatxType | StatxIno)) != (StatxType | StatxIno))
        {
            return false;
        }

        var device = ((ulong)*(uint*)(buffer + DeviceMajorOffset) << 32) | *(uint*)(buffer + DeviceMinorOffset);
        status = new Status(device, *(ulong*)(buffer + InodeOffset), *(ushort*)(buffer + ModeOffset) & TypeMask);
        return true;
    }

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Statx(int directory, string path, int flags, uint mask, byte* buffer);
}
