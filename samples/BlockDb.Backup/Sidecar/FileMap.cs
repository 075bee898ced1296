using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using BlockDb.Backup.Cli;

namespace BlockDb.Backup.Sidecar;

/// <summary>One line of the sidecar: a file path, the blockset that holds its content, and its length in bytes.</summary>
internal readonly record struct FileMapEntry(string Path, long BlocksetId, long Length);

/// <summary>
/// The sidecar: BlockDb's schema has no file table (Duplicati keeps paths in tables of its own), so the path → blockset
/// mapping lives in a file of the sample's, one TSV line per indexed file, appended by every index run. Header
/// <c>path	blockset_id	length</c>; paths are escaped (<see cref="Tsv"/>). When a path appears more than once, the
/// last line wins. Beside a BlockDb index it is <c>&lt;db&gt;.files.tsv</c>; a Duplicati database and its folder are
/// Duplicati's, so its sidecar lives in the sample's own data folder, keyed by the database's full path
/// (<see cref="PathFor"/>).
/// </summary>
internal static class FileMap
{
    public const string Header = "path\tblockset_id\tlength";
    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false);

    /// <summary>The sidecar of a BlockDb index (never a Duplicati database): <c>&lt;db&gt;.files.tsv</c> beside it.</summary>
    /// <param name="databasePath">The index's full path.</param>
    /// <returns>The sidecar's full path.</returns>
    public static string PathFor(string databasePath) => databasePath + ".files.tsv";

    /// <summary>
    /// The sidecar of a database: <c>&lt;db&gt;.files.tsv</c> beside a BlockDb index; for a Duplicati database
    /// <c>&lt;dataFolder&gt;/duplicati/&lt;db file name&gt;.&lt;16 hex&gt;.files.tsv</c>, the hex digits the start of the
    /// SHA-256 of the database's full path (UTF-8), so two databases of one name never share a sidecar.
    /// </summary>
    /// <param name="databasePath">The database's full path.</param>
    /// <param name="duplicati">The database is a Duplicati local database (<see cref="BlockLayout.Duplicati"/>).</param>
    /// <param name="dataFolder">The sample's own folder (<c>Backup:DataFolder</c>).</param>
    /// <returns>The sidecar's full path; its folder is not created.</returns>
    public static string PathFor(string databasePath, bool duplicati, string dataFolder)
    {
        if (!duplicati)
        {
            return PathFor(databasePath);
        }

        var key = Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(databasePath)).AsSpan(0, 8));
        return Path.Combine(dataFolder, "duplicati", $"{Path.GetFileName(databasePath)}.{key}.files.tsv");
    }

    /// <summary>Opens the sidecar for appending, writing the header when it is new; its folder is created.</summary>
    public static StreamWriter OpenAppend(string sidecarPath)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(sidecarPath)!);
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
