using System.Globalization;

namespace BlockDb.Backup.Cli;

/// <summary>Parses and prints byte counts: <c>1048576</c>, <c>100KiB</c>, <c>1MiB</c>, <c>1mb</c> (K, M, G are 1024-based, as in Duplicati).</summary>
internal static class ByteSize
{
    private static readonly (string Suffix, long Factor)[] Units =
    [
        ("kib", 1L << 10), ("kb", 1L << 10), ("k", 1L << 10),
        ("mib", 1L << 20), ("mb", 1L << 20), ("m", 1L << 20),
        ("gib", 1L << 30), ("gb", 1L << 30), ("g", 1L << 30),
        ("b", 1),
    ];

    public static bool TryParse(string? text, out long bytes)
    {
        bytes = 0;
        var s = text?.Trim().ToLowerInvariant();
        if (string.IsNullOrEmpty(s))
        {
            return false;
        }

        long factor = 1;
        foreach (var (suffix, f) in Units)
        {
            if (s.EndsWith(suffix, StringComparison.Ordinal))
            {
                s = s[..^suffix.Length].TrimEnd();
                factor = f;
                break;
            }
        }

        if (!long.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out var value))
        {
            return false;
        }

        try
        {
            bytes = checked(value * factor);
            return true;
        }
        catch (OverflowException)
        {
            return false;
        }
    }

    /// <summary>Prints a byte count with a 1024-based unit, for example <c>6.62 GiB</c>.</summary>
    public static string Format(long bytes)
    {
        string[] units = ["B", "KiB", "MiB", "GiB", "TiB"];
        double value = bytes;
        var unit = 0;
        while (Math.Abs(value) >= 1024 && unit < units.Length - 1)
        {
            value /= 1024;
            unit++;
        }

        return unit == 0
            ? string.Create(CultureInfo.InvariantCulture, $"{bytes} B")
            : string.Create(CultureInfo.InvariantCulture, $"{value:0.##} {units[unit]}");
    }
}
