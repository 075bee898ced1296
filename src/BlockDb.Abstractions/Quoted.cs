using System.Buffers;
using System.Globalization;
using System.Text;

namespace BlockDb;

/// <summary>
/// How a value that a caller gave, or that a file or server held, appears in an exception message, in every BlockDb
/// project: in single quotes, at most <see cref="MaxValueCharacters"/> of its characters (<see cref="MaxPathCharacters"/>
/// for a file path), the middle cut out and replaced by "…" beyond that (a surrogate pair is never split), and every
/// character that would not print as itself (a control or format character, a line or paragraph separator, an unpaired
/// surrogate) written as <c>\uXXXX</c> (<c>\UXXXXXXXX</c> above U+FFFF). So a 10 MB argument gives a message of about a
/// hundred characters, and the message is valid UTF-16 whatever it quotes. The length, where it matters, is the
/// caller's to state.
/// </summary>
internal static class Quoted
{
    /// <summary>The most characters of a value (a hash, a name, a setting, stored text) a message shows.</summary>
    public const int MaxValueCharacters = 96;

    /// <summary>The most characters of a file path a message shows (Linux's PATH_MAX).</summary>
    public const int MaxPathCharacters = 4096;

    /// <summary>A value quoted for a message, at most <see cref="MaxValueCharacters"/> of it; <c>null</c> for null.</summary>
    /// <param name="value">The value as given.</param>
    /// <returns>The quoted, bounded, escaped text.</returns>
    public static string Value(string? value) => Quote(value, MaxValueCharacters);

    /// <summary>A file path quoted for a message, at most <see cref="MaxPathCharacters"/> of it; <c>null</c> for null.</summary>
    /// <param name="path">The path as given.</param>
    /// <returns>The quoted, bounded, escaped text.</returns>
    public static string Path(string? path) => Quote(path, MaxPathCharacters);

    private static string Quote(string? value, int max)
    {
        if (value is null)
        {
            return "null";
        }

        var text = new StringBuilder(Math.Min(value.Length, max) + 3);
        text.Append('\'');
        if (value.Length <= max)
        {
            Append(text, value);
        }
        else
        {
            // Two thirds from the start, a third from the end (a path's file name, a hash's padding).
            var head = max * 2 / 3;
            var tailStart = value.Length - (max - head);
            if (char.IsHighSurrogate(value[head - 1]) && char.IsLowSurrogate(value[head]))
            {
                head--;
            }

            if (char.IsLowSurrogate(value[tailStart]) && char.IsHighSurrogate(value[tailStart - 1]))
            {
                tailStart++;
            }

            Append(text, value.AsSpan(0, head));
            text.Append('…');
            Append(text, value.AsSpan(tailStart));
        }

        return text.Append('\'').ToString();
    }

    private static void Append(StringBuilder text, ReadOnlySpan<char> value)
    {
        while (!value.IsEmpty)
        {
            if (Rune.DecodeFromUtf16(value, out var rune, out var used) != OperationStatus.Done)
            {
                text.Append(CultureInfo.InvariantCulture, $"\\u{(int)value[0]:X4}");
                value = value[1..];
                continue;
            }

            if (Rune.GetUnicodeCategory(rune) is UnicodeCategory.Control or UnicodeCategory.Format or UnicodeCategory.LineSeparator or UnicodeCategory.ParagraphSeparator)
            {
                text.Append(rune.IsBmp ? "\\u" : "\\U").Append(rune.Value.ToString(rune.IsBmp ? "X4" : "X8", CultureInfo.InvariantCulture));
            }
            else
            {
                text.Append(value[..used]);
            }

            value = value[used..];
        }
    }
}
