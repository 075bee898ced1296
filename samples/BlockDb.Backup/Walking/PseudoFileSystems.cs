namespace BlockDb.Backup.Walking;

/// <summary>
/// The mount points of kernel pseudo file systems (proc, sysfs, devtmpfs…), read from <c>/proc/self/mountinfo</c>:
/// the walker never descends into them, as their "files" are endless or change while read.
/// </summary>
internal static class PseudoFileSystems
{
    private static readonly HashSet<string> Types = new(StringComparer.Ordinal)
    {
        "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs", "tracefs", "pstore",
        "bpf", "mqueue", "hugetlbfs", "configfs", "fusectl", "binfmt_misc", "autofs", "efivarfs", "rpc_pipefs", "nsfs",
    };

    public static HashSet<string> MountPoints()
    {
        var result = new HashSet<string>(StringComparer.Ordinal) { "/proc", "/sys", "/dev" };
        const string mountInfo = "/proc/self/mountinfo";
        if (!File.Exists(mountInfo))
        {
            return result;
        }

        try
        {
            foreach (var line in File.ReadLines(mountInfo))
            {
                // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": field 5 is the mount point,
                // the first field after " - " the file system type.
                var fields = line.Split(' ');
                var separator = Array.IndexOf(fields, "-");
                if (fields.Length > 4 && separator > 4 && separator + 1 < fields.Length && Types.Contains(fields[separator + 1]))
                {
                    result.Add(Unescape(fields[4]));
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Keep the well-known ones.
        }

        return result;
    }

    /// <summary>mountinfo writes space, tab, newline and backslash as three octal digits (<c>\040</c>).</summary>
    private static string Unescape(string field)
    {
        if (!field.Contains('\\', StringComparison.Ordinal))
        {
            return field;
        }

        var chars = new System.Text.StringBuilder(field.Length);
        for (var i = 0; i < field.Length; i++)
        {
            if (field[i] == '\\' && IsOctal(field, i + 1))
            {
                chars.Append((char)Convert.ToInt32(field.Substring(i + 1, 3), 8));
                i += 3;
            }
            else
            {
                chars.Append(field[i]);
            }
        }

        return chars.ToString();
    }

    private static bool IsOctal(string s, int start) =>
        start + 3 <= s.Length && s.AsSpan(start, 3).IndexOfAnyExceptInRange('0', '7') < 0;
}
