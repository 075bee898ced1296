using System.Globalization;

namespace BlockDb.Bench.Data;

/// <summary>A recorded block stream: blocks in order, grouped by file.</summary>
/// <param name="Hashes">Block hashes.</param>
/// <param name="Sizes">Block sizes.</param>
/// <param name="FileStarts">First block of each file, plus the end.</param>
/// <param name="Source">Where it was read from.</param>
/// <param name="SkippedLines">Lines that were not valid blocks and were skipped.</param>
public sealed record ReplayStream(string[] Hashes, long[] Sizes, int[] FileStarts, string Source, int SkippedLines)
{
    /// <summary>Files in the stream.</summary>
    public int Files => FileStarts.Length - 1;
}

/// <summary>
/// Reads the TSV that <c>samples/BlockDb.Backup index &lt;dir&gt; --record &lt;file&gt;</c> writes
/// (<c>file_index	block_index	hash	size</c>, one line per block, in order). Tolerant: the header is
/// optional and its columns may come in any order (matched by name), blank lines and <c>#</c> comments are
/// skipped, CRLF and surrounding spaces are accepted, commas or runs of spaces work when a line has no tab,
/// and invalid lines are skipped and counted (the first few are reported). A new file starts whenever
/// <c>file_index</c> changes or <c>block_index</c> goes back to 0.
/// </summary>
public static class ReplayReader
{
    private const int ReportedProblems = 5;

    /// <summary>Reads a replay file.</summary>
    /// <param name="path">The TSV file.</param>
    /// <param name="warn">Receives warnings about skipped lines.</param>
    /// <returns>The stream.</returns>
    /// <exception cref="InvalidDataException">No valid block line.</exception>
    public static ReplayStream Read(string path, Action<string> warn)
    {
        using var reader = new StreamReader(path);
        return Read(reader, path, warn);
    }

    /// <summary>Reads replay text.</summary>
    /// <param name="reader">The text.</param>
    /// <param name="source">A name for messages.</param>
    /// <param name="warn">Receives warnings about skipped lines.</param>
    /// <returns>The stream.</returns>
    /// <exception cref="InvalidDataException">No valid block line.</exception>
    public static ReplayStream Read(TextReader reader, string source, Action<string> warn)
    {
        ArgumentNullException.ThrowIfNull(reader);
        ArgumentNullException.ThrowIfNull(warn);
        int[] columns = [0, 1, 2, 3]; // file_index, block_index, hash, size
        var hashes = new List<string>();
        var sizes = new List<long>();
        var starts = new List<int>();
        long? lastFile = null;
        var skipped = 0;
        var lineNumber = 0;
        var sawData = false;
        while (reader.ReadLine() is { } raw)
        {
            lineNumber++;
            var line = raw.Trim().TrimStart('\uFEFF');
            if (line.Length == 0 || line[0] == '#')
            {
                continue;
            }

            var fields = Split(line);
            if (!sawData && TryHeader(fields, out var mapped))
            {
                columns = mapped;
                continue;
            }

            sawData = true;
            if (!TryParse(fields, columns, out var file, out var index, out var hash, out var size, out var problem))
            {
                if (++skipped <= ReportedProblems)
                {
                    warn($"{source}:{lineNumber}: skipped ({problem}): {Shorten(line)}");
                }

                continue;
            }

            if (lastFile != file || index == 0 || starts.Count == 0)
            {
                starts.Add(hashes.Count);
                lastFile = file;
            }

            hashes.Add(hash);
            sizes.Add(size);
        }

        if (skipped > ReportedProblems)
        {
            warn($"{source}: {skipped} invalid lines skipped in all.");
        }

        if (hashes.Count == 0)
        {
            throw new InvalidDataException($"{source}: no valid block line (expected file_index<TAB>block_index<TAB>hash<TAB>size).");
        }

        starts.Add(hashes.Count);
        return new ReplayStream([.. hashes], [.. sizes], [.. starts], source, skipped);
    }

    private static string[] Split(string line) =>
        line.Contains('\t', StringComparison.Ordinal)
            ? [.. line.Split('\t').Select(f => f.Trim())]
            : line.Split([',', ' '], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static bool TryHeader(string[] fields, out int[] columns)
    {
        columns = [-1, -1, -1, -1];
        if (fields.Length == 0 || long.TryParse(fields[0], NumberStyles.Integer, CultureInfo.InvariantCulture, out _))
        {
            return false;
        }

        string[] names = ["file_index", "block_index", "hash", "size"];
        for (var i = 0; i < fields.Length; i++)
        {
            var name = fields[i].ToLowerInvariant().Replace(' ', '_').Replace('-', '_');
            var at = Array.IndexOf(names, name);
            if (at >= 0)
            {
                columns[at] = i;
            }
        }

        if (columns[2] < 0 || columns[3] < 0)
        {
            // Not a header we understand: treat the line as (invalid) data.
            columns = [0, 1, 2, 3];
            return false;
        }

        return true;
    }

    private static bool TryParse(string[] fields, int[] columns, out long file, out long index, out string hash, out long size, out string problem)
    {
        file = 0;
        index = -1;
        hash = string.Empty;
        size = 0;
        string? Field(int column) => column >= 0 && column < fields.Length ? fields[column] : null;

        if (Field(columns[2]) is not { } h || Field(columns[3]) is not { } s)
        {
            problem = "too few fields";
            return false;
        }

        if (!BlockHash.TryParse(h, out _))
        {
            problem = "hash is not padded base64";
            return false;
        }

        if (!long.TryParse(s, NumberStyles.Integer, CultureInfo.InvariantCulture, out size) || size < 1)
        {
            problem = "size is not a positive integer";
            return false;
        }

        if (Field(columns[0]) is { } f && !long.TryParse(f, NumberStyles.Integer, CultureInfo.InvariantCulture, out file))
        {
            problem = "file_index is not an integer";
            return false;
        }

        if (Field(columns[1]) is { } b && !long.TryParse(b, NumberStyles.Integer, CultureInfo.InvariantCulture, out index))
        {
            problem = "block_index is not an integer";
            return false;
        }

        hash = h;
        problem = string.Empty;
        return true;
    }

    private static string Shorten(string s) => s.Length <= 120 ? s : s[..120] + "…";
}
