using System.Globalization;
using System.Text;
using BlockDb.Backup.Cli;

namespace BlockDb.Backup.Sidecar;

/// <summary>One line of the sidecar: a file path, the blockset that holds its content, and its length in bytes.</summary>
internal readonly record struct FileMapEntry(string Path, long BlocksetId, long Length);

/// <summary>
/// The sidecar <c>&lt;db&gt;.files.tsv</c>: BlockDb's schema has no file table (Duplicati keeps paths in tables of
/// its own), so the path → blockset mapping lives next to the database, one TSV line per indexed file, appended by
/// every index run. Header <c>path	blockset_id	length</c>; paths are escaped (<see cref="Tsv"/>). When a path
/// appears more than once, the last line wins.
/// </summary>
internal static class FileMap
{
    public const string Header = "path\tblockset_id\tlength";
    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false);

    public static string PathFor(string databasePath) => databasePath + ".files.tsv";

    /// <summary>Opens the sidecar for appending, writing the header when it is new.</summary>
    public static StreamWriter OpenAppend(string sidecarPath)
    {
        var isNew = !File.Exists(sidecarPath) || new FileInfo(sidecarPath).Length == 0;
        var writer = new StreamWriter(sidecarPath, append: true, Utf8, bufferSize: 1 << 16) { NewLine = "\n" };
        if (isNew)
        {
            writer.WriteLine(Header);
        }

        return writer;
    }

    public static void Write(TextWriter writer, FileMapEntry entry) =>
        writer.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{Tsv.Escape(entry.Path)}\t{entry.BlocksetId}\t{entry.Length}"));

    /// <summary>
    /// Replaces the sidecar with <paramref name="entries"/>, one line each (what <c>delete</c> leaves): written to
    /// <c>&lt;sidecar&gt;.tmp</c>, flushed to disk, then renamed over the sidecar, so a crash leaves the old file or
    /// the new one, never half of one.
    /// </summary>
    public static void Rewrite(string sidecarPath, IEnumerable<FileMapEntry> entries)
    {
        var temporary = sidecarPath + ".tmp";
        using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 1 << 16))
        {
            using var writer = new StreamWriter(stream, Utf8, bufferSize: 1 << 16, leaveOpen: true) { NewLine = "\n" };
            writer.WriteLine(Header);
            foreach (var entry in entries)
            {
                Write(writer, entry);
            }

            writer.Flush();
            stream.Flush(flushToDisk: true);
        }

        File.Move(temporary, sidecarPath, overwrite: true);
    }

    /// <summary>Reads the sidecar; the last line of a path wins; entries keep the order of their first line.</summary>
    /// <exception cref="UsageException">The file is missing or malformed.</exception>
    public static List<FileMapEntry> Read(string sidecarPath)
    {
        if (!File.Exists(sidecarPath))
        {
            throw new UsageException($"The sidecar file '{sidecarPath}' does not exist; it is written by 'index' next to the database.");
        }

        var byPath = new Dictionary<string, FileMapEntry>(StringComparer.Ordinal);
        var lineNumber = 0;
        foreach (var line in File.ReadLines(sidecarPath, Utf8))
        {
            lineNumber++;
            if (lineNumber == 1 && line == Header || line.Length == 0)
            {
                continue;
            }

            var fields = line.Split('\t');
            if (fields.Length != 3
                || !long.TryParse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture, out var id)
                || !long.TryParse(fields[2], NumberStyles.None, CultureInfo.InvariantCulture, out var length))
            {
                throw new UsageException($"{sidecarPath}:{lineNumber}: expected 'path<TAB>blockset_id<TAB>length'.");
            }

            var path = Tsv.Unescape(fields[0]);
            byPath[path] = new FileMapEntry(path, id, length);
        }

        return [.. byPath.Values];
    }
}
