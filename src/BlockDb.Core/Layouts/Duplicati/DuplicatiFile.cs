using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// A Duplicati local database as BlockDb found it when it opened it: recognised by Duplicati's own rule (exactly one
/// schema object named <c>version</c>, and its table at version <see cref="SupportedVersion"/>), its 19 tables and the
/// <c>File</c> view with exactly Duplicati's columns, the four indexes BlockDb's correctness rests on, and the block
/// size and hash algorithms from <c>Configuration</c> (docs/DUPLICATI-FACTS.md §1.1-1.4, §3). Reading it writes nothing.
/// Immutable.
/// </summary>
/// <param name="Blocksize">Configuration's <c>blocksize</c>, in bytes (at least 1024).</param>
/// <param name="BlockHash">The block hash algorithm (<c>blockhash</c>).</param>
/// <param name="BlockHashName">The block hash algorithm as Configuration names it.</param>
/// <param name="FileHash">The file hash algorithm (<c>filehash</c>).</param>
/// <param name="FileHashName">The file hash algorithm as Configuration names it.</param>
/// <param name="Indexes">The names of Duplicati's indexes the file has (letter case ignored); the required ones always among them.</param>
internal sealed record DuplicatiFile(int Blocksize, HashAlgorithmName BlockHash, string BlockHashName, HashAlgorithmName FileHash, string FileHashName, IReadOnlySet<string> Indexes)
{
    /// <summary>The Duplicati schema version this build works on (Duplicati's schema as read at 66cfb242).</summary>
    public const int SupportedVersion = 19;

    /// <summary>Duplicati's smallest block size (<c>Options.cs</c> 1310-1320).</summary>
    public const int MinimumBlocksize = 1024;

    /// <summary>The index on <c>DeletedBlock</c> (Hash, Size) that some 2025 canary files lack (facts §1.4); without it a take-back scans.</summary>
    public const string DeletedBlockHashSize = "DeletedBlockHashSize";

    /// <summary>The block hash size in bytes.</summary>
    public int BlockHashSize => HashSize(BlockHash);

    /// <summary>The file hash size in bytes.</summary>
    public int FileHashSize => HashSize(FileHash);

    /// <summary>Hashes per blocklist block: <c>blocksize / hashsize</c>, integer division (facts §5).</summary>
    public int HashesPerBlocklist => Blocksize / BlockHashSize;

    // The 19 tables and the view (facts §1.2): column name, declared type, NOT NULL, primary-key position. "I", "T", "B"
    // stand for INTEGER, TEXT, BLOB; a view's columns have no declared type here (its "type" is what SQLite infers).
    private static readonly (string Table, (string Name, string Type, bool NotNull, int Pk)[] Columns)[] Tables =
    [
        ("Operation", [("ID", "I", false, 1), ("Description", "T", true, 0), ("Timestamp", "I", true, 0)]),
        ("Remotevolume", [("ID", "I", false, 1), ("OperationID", "I", true, 0), ("Name", "T", true, 0), ("Type", "T", true, 0), ("Size", "I", false, 0), ("Hash", "T", false, 0), ("State", "T", true, 0), ("VerificationCount", "I", true, 0), ("DeleteGraceTime", "I", true, 0), ("ArchiveTime", "I", true, 0), ("LockExpirationTime", "I", true, 0)]),
        ("IndexBlockLink", [("IndexVolumeID", "I", true, 0), ("BlockVolumeID", "I", true, 0)]),
        ("Fileset", [("ID", "I", false, 1), ("OperationID", "I", true, 0), ("VolumeID", "I", true, 0), ("IsFullBackup", "I", true, 0), ("Timestamp", "I", true, 0)]),
        ("FilesetEntry", [("FilesetID", "I", true, 1), ("FileID", "I", true, 2), ("Lastmodified", "I", true, 0)]),
        ("PathPrefix", [("ID", "I", false, 1), ("Prefix", "T", true, 0)]),
        ("FileLookup", [("ID", "I", false, 1), ("PrefixID", "I", true, 0), ("Path", "T", true, 0), ("BlocksetID", "I", true, 0), ("MetadataID", "I", true, 0)]),
        ("BlocklistHash", [("BlocksetID", "I", true, 0), ("Index", "I", true, 0), ("Hash", "T", true, 0)]),
        ("Blockset", [("ID", "I", false, 1), ("Length", "I", true, 0), ("FullHash", "T", true, 0)]),
        ("BlocksetEntry", [("BlocksetID", "I", true, 1), ("Index", "I", true, 2), ("BlockID", "I", true, 0)]),
        ("Block", [("ID", "I", false, 1), ("Hash", "T", true, 0), ("Size", "I", true, 0), ("VolumeID", "I", true, 0)]),
        ("DeletedBlock", [("ID", "I", false, 1), ("Hash", "T", true, 0), ("Size", "I", true, 0), ("VolumeID", "I", true, 0)]),
        ("DuplicateBlock", [("BlockID", "I", true, 0), ("VolumeID", "I", true, 0)]),
        ("Metadataset", [("ID", "I", false, 1), ("BlocksetID", "I", true, 0), ("Content", "T", false, 0)]),
        ("RemoteOperation", [("ID", "I", false, 1), ("OperationID", "I", true, 0), ("Timestamp", "I", true, 0), ("Operation", "T", true, 0), ("Path", "T", true, 0), ("Data", "B", false, 0)]),
        ("LogData", [("ID", "I", false, 1), ("OperationID", "I", true, 0), ("Timestamp", "I", true, 0), ("Type", "T", true, 0), ("Message", "T", true, 0), ("Exception", "T", false, 0)]),
        ("Version", [("ID", "I", false, 1), ("Version", "I", true, 0)]),
        ("Configuration", [("Key", "T", true, 1), ("Value", "T", true, 0)]),
        ("ChangeJournalData", [("ID", "I", false, 1), ("FilesetID", "I", true, 0), ("VolumeName", "T", true, 0), ("JournalID", "I", true, 0), ("NextUsn", "I", true, 0), ("ConfigHash", "T", true, 0)]),
    ];

    private const string FileView = "File";

    private static readonly string[] FileViewColumns = ["ID", "Path", "BlocksetID", "MetadataID"];

    // What an upgrade script adds, for the half-upgraded file's message (facts §1.4).
    private static readonly Dictionary<string, int> AddedByScript = new(StringComparer.OrdinalIgnoreCase)
    {
        ["FilesetEntry.Lastmodified"] = 2,
        ["Remotevolume.DeleteGraceTime"] = 3,
        ["ChangeJournalData"] = 8,
        ["PathPrefix"] = 9,
        ["FileLookup"] = 9,
        ["File"] = 9,
        ["Fileset.IsFullBackup"] = 10,
        ["Remotevolume.ArchiveTime"] = 15,
        ["Remotevolume.LockExpirationTime"] = 18,
        ["Metadataset.Content"] = 19,
    };

    // The indexes BlockDb's correctness rests on (unique, not partial, exactly these columns): the block lookup and its
    // uniqueness, blockset find-or-add, one blocklist hash per (blockset, index), a volume name taken once.
    private static readonly (string Index, string Table, string[] Columns)[] RequiredIndexes =
    [
        ("BlockHashSize", "Block", ["Hash", "Size"]),
        ("BlocksetFullHash", "Blockset", ["FullHash", "Length"]),
        ("BlocklistHashBlocksetIDIndex", "BlocklistHash", ["BlocksetID", "Index"]),
        ("RemotevolumeNameOnly", "Remotevolume", ["Name"]),
    ];

    // Duplicati's 22 named indexes (facts §1.3); the others are optional.
    private static readonly string[] KnownIndexes =
    [
        "RemotevolumeNameOnly", "RemotevolumeName", "FilesetentryFileIdIndex", "nn_FilesetentryFile", "PathPrefixPrefix",
        "FileLookupPath", "nn_FileLookup_BlockMeta", "FileLookupMetadataID", "BlocklistHashBlocksetIDIndex",
        "BlocksetFullHash", "BlocksetEntry_IndexIdsBackwards", "nnc_BlocksetEntry", "BlocksetEntry_BlocksetID",
        "BlockHashSize", "Block_IndexByVolumeId", "BlockSize", "BlockHashVolumeID", DeletedBlockHashSize,
        "DeletedBlockHashVolumeID", "UniqueBlockVolumeDuplicateBlock", "MetadatasetBlocksetID", "nnc_Metadataset",
    ];

    /// <summary>The hash algorithms Duplicati names in <c>blockhash</c> and <c>filehash</c> (<c>HashFactory.cs</c> 56-82).</summary>
    private static readonly (string Name, HashAlgorithmName Algorithm, int Size)[] HashNames =
    [
        ("SHA256", HashAlgorithmName.SHA256, 32),
        ("SHA1", HashAlgorithmName.SHA1, 20),
        ("MD5", HashAlgorithmName.MD5, 16),
        ("SHA384", HashAlgorithmName.SHA384, 48),
        ("SHA512", HashAlgorithmName.SHA512, 64),
    ];

    /// <summary>The size in bytes of a hash Duplicati can use.</summary>
    public static int HashSize(HashAlgorithmName algorithm) => HashNames.First(h => h.Algorithm == algorithm).Size;

    /// <summary>
    /// Recognises a Duplicati local database, inside the caller's read transaction; writes nothing.
    /// </summary>
    /// <param name="connection">A connection to the file, in a read transaction.</param>
    /// <param name="path">The file, for messages.</param>
    /// <returns>The file, or <see langword="null"/> when no schema object is named <c>version</c> (not a Duplicati file).</returns>
    /// <exception cref="DuplicatiSchemaVersionException">A Duplicati file at another schema version.</exception>
    /// <exception cref="BlockDbFormatException">
    /// More than one object named <c>version</c>; a <c>version</c> object that is not Duplicati's table; a table, column or
    /// the view missing or shaped otherwise (a half-finished upgrade); a required index missing or not unique; a
    /// <c>Configuration</c> without a valid <c>blocksize</c>, <c>blockhash</c> or <c>filehash</c>.
    /// </exception>
    public static DuplicatiFile? Recognize(ISqliteConnection connection, string path)
    {
        var named = ReadLong(connection, BlockDbSql.DuplicatiVersionObjects) ?? 0;
        if (named == 0)
        {
            return null;
        }

        var file = Quoted.Path(path);
        if (named > 1)
        {
            throw new BlockDbFormatException(
                $"{file} has {named} schema objects named 'version' (in any letter case); a Duplicati local database has exactly one, its Version table, and Duplicati refuses such a file too (DatabaseFormatError). Drop the extra object with the tool that added it.");
        }

        if (ReadLong(connection, BlockDbSql.DuplicatiVersionIsTable) != 1)
        {
            throw new BlockDbFormatException(
                $"{file} has a schema object named 'version' that is not Duplicati's Version table (a table with a Version column), and no application_id BlockDb knows; BlockDb opens its own files, empty files and Duplicati local databases (schema {SupportedVersion}) only.");
        }

        var version = ReadLong(connection, BlockDbSql.DuplicatiVersion) ?? -1;
        if (version != SupportedVersion)
        {
            throw new DuplicatiSchemaVersionException(
                version < SupportedVersion
                    ? $"{file} is a Duplicati local database at schema version {version}; BlockDb works on version {SupportedVersion} (Duplicati's schema as read at 66cfb242). Open it once with a current Duplicati, which upgrades it (and keeps a copy), then with BlockDb."
                    : $"{file} is a Duplicati local database at schema version {version}, written by a newer Duplicati than this BlockDb knows (it works on version {SupportedVersion}); use a BlockDb that supports version {version}.",
                version,
                SupportedVersion);
        }

        CheckShape(connection, file);
        var indexes = CheckIndexes(connection, file);
        var configuration = ReadConfiguration(connection, file);
        var (blockHash, blockHashName) = Hash(configuration, "blockhash", file);
        var (fileHash, fileHashName) = Hash(configuration, "filehash", file);
        return new DuplicatiFile(ReadBlocksize(configuration, file), blockHash, blockHashName, fileHash, fileHashName, indexes);
    }

    private static void CheckShape(ISqliteConnection connection, string file)
    {
        using var type = connection.Prepare(BlockDbSql.DuplicatiObjectType);
        using var columns = connection.Prepare(BlockDbSql.DuplicatiColumns);
        foreach (var (table, expected) in Tables)
        {
            RequireObject(type, table, "table", file);
            var found = ReadColumns(columns, table);
            foreach (var (name, declared, notNull, pk) in expected)
            {
                if (!found.TryGetValue(name, out var column))
                {
                    throw HalfUpgraded(file, $"{Quoted.Value(table)} has no {Quoted.Value(name)} column", $"{table}.{name}");
                }

                var typeName = declared switch { "I" => "INTEGER", "T" => "TEXT", _ => "BLOB" };
                if (!string.Equals(column.Type, typeName, StringComparison.OrdinalIgnoreCase) || column.NotNull != notNull || column.Pk != pk)
                {
                    throw new BlockDbFormatException(
                        $"{file} says Duplicati schema version {SupportedVersion}, but its column {Quoted.Value(table)}.{Quoted.Value(name)} is {Describe(column.Type, column.NotNull, column.Pk)} where Duplicati's is {Describe(typeName, notNull, pk)}; BlockDb works only on Duplicati's own schema. Nothing was changed.");
                }
            }

            foreach (var extra in found.Keys.Where(n => !expected.Any(c => string.Equals(c.Name, n, StringComparison.OrdinalIgnoreCase))))
            {
                throw new BlockDbFormatException(
                    $"{file} says Duplicati schema version {SupportedVersion}, but its table {Quoted.Value(table)} has a column {Quoted.Value(extra)} Duplicati's schema does not have; BlockDb works only on Duplicati's own schema. Nothing was changed.");
            }
        }

        RequireObject(type, FileView, "view", file);
        var viewColumns = ReadColumns(columns, FileView);
        if (viewColumns.Count != FileViewColumns.Length || FileViewColumns.Any(c => !viewColumns.ContainsKey(c)))
        {
            throw new BlockDbFormatException(
                $"{file} says Duplicati schema version {SupportedVersion}, but its view 'File' has the columns {string.Join(", ", viewColumns.Keys)} where Duplicati's has {string.Join(", ", FileViewColumns)}. Nothing was changed.");
        }
    }

    private static void RequireObject(ISqliteStatement type, string name, string kind, string file)
    {
        type.BindText(1, name);
        var found = type.Step() ? type.ColumnText(0) : null;
        type.Reset();
        if (found is null)
        {
            throw HalfUpgraded(file, $"the {kind} {Quoted.Value(name)} is missing", name);
        }

        if (found != kind)
        {
            throw new BlockDbFormatException(
                $"{file} says Duplicati schema version {SupportedVersion}, but {Quoted.Value(name)} is a {found} where Duplicati has a {kind}. Nothing was changed.");
        }
    }

    private static Dictionary<string, (string Type, bool NotNull, int Pk)> ReadColumns(ISqliteStatement columns, string table)
    {
        var found = new Dictionary<string, (string, bool, int)>(StringComparer.OrdinalIgnoreCase);
        columns.BindText(1, table);
        while (columns.Step())
        {
            found[columns.ColumnText(0) ?? string.Empty] = (columns.ColumnText(1) ?? string.Empty, columns.ColumnInt64(2) != 0, (int)columns.ColumnInt64(3));
        }

        columns.Reset();
        return found;
    }

    private static BlockDbFormatException HalfUpgraded(string file, string what, string key)
    {
        var script = AddedByScript.TryGetValue(key, out var number)
            ? string.Create(CultureInfo.InvariantCulture, $" (added by Duplicati's upgrade script {number})")
            : string.Empty;
        return new BlockDbFormatException(
            $"{file} says Duplicati schema version {SupportedVersion}, but {what}{script}: a half-finished Duplicati upgrade. Duplicati restores its pre-upgrade copy '<prefix> <database> <time>.sqlite' (in the same folder) when an upgrade fails; restore it, or let Duplicati finish the upgrade, then open the file again. Nothing was changed.");
    }

    private static string Describe(string type, bool notNull, int pk) =>
        string.Create(CultureInfo.InvariantCulture, $"{(type.Length == 0 ? "untyped" : type.ToUpperInvariant())}{(notNull ? " NOT NULL" : string.Empty)}{(pk > 0 ? $" (primary key column {pk})" : string.Empty)}");

    private static HashSet<string> CheckIndexes(ISqliteConnection connection, string file)
    {
        using (var index = connection.Prepare(BlockDbSql.DuplicatiIndex))
        using (var indexColumns = connection.Prepare(BlockDbSql.DuplicatiIndexColumns))
        {
            foreach (var (name, table, columns) in RequiredIndexes)
            {
                index.BindText(1, table);
                index.BindText(2, name);
                var exists = index.Step();
                var (unique, partial) = exists ? (index.ColumnInt64(0) == 1, index.ColumnInt64(1) == 1) : (false, false);
                index.Reset();
                var found = new List<string>();
                if (exists)
                {
                    indexColumns.BindText(1, name);
                    while (indexColumns.Step())
                    {
                        found.Add(indexColumns.ColumnText(0) ?? string.Empty);
                    }

                    indexColumns.Reset();
                }

                if (!exists || !unique || partial || !found.SequenceEqual(columns, StringComparer.OrdinalIgnoreCase))
                {
                    var state = !exists ? "is missing" : $"is not Duplicati's (found {(unique ? "UNIQUE" : "not unique")}{(partial ? ", partial" : string.Empty)}, on {string.Join(", ", found)})";
                    throw new BlockDbFormatException(
                        $"{file} is a Duplicati local database whose index {Quoted.Value(name)} {state}; BlockDb needs it UNIQUE on {table} ({string.Join(", ", columns)}), as Duplicati's Schema.sql creates it, because its answers rest on it. Let Duplicati re-create it (a repair or recreate makes a fresh file), then open the file again. Nothing was changed.");
                }
            }
        }

        var present = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        using var names = connection.Prepare(BlockDbSql.DuplicatiIndexNames);
        while (names.Step())
        {
            if (names.ColumnText(0) is { } name && KnownIndexes.Contains(name, StringComparer.OrdinalIgnoreCase))
            {
                present.Add(name);
            }
        }

        names.Reset();
        return present;
    }

    private static Dictionary<string, string?> ReadConfiguration(ISqliteConnection connection, string file)
    {
        var rows = new Dictionary<string, string?>(StringComparer.Ordinal);
        using (var read = connection.Prepare(BlockDbSql.DuplicatiConfiguration))
        {
            while (read.Step())
            {
                rows[read.ColumnText(0) ?? string.Empty] = read.ColumnText(1);
            }

            read.Reset();
        }

        if (rows.Count == 0)
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database that has never been used: its Configuration table is empty, so its block size and hash algorithms are not known yet. Duplicati writes them at the start of its first backup; open the file with BlockDb after that point. Nothing was changed.");
        }

        return rows;
    }

    private static int ReadBlocksize(Dictionary<string, string?> configuration, string file)
    {
        if (!configuration.TryGetValue("blocksize", out var text))
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration has no 'blocksize' row, yet it has been used (Duplicati writes blocksize, blockhash and filehash together at its first backup); BlockDb needs the block size. Let Duplicati repair or recreate the database. Nothing was changed.");
        }

        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var blocksize) || blocksize < MinimumBlocksize)
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration 'blocksize' is {Quoted.Value(text)}; allowed: a whole number of bytes from {MinimumBlocksize} to {int.MaxValue}, in decimal, as Duplicati writes it. Nothing was changed.");
        }

        return blocksize;
    }

    private static (HashAlgorithmName Algorithm, string Name) Hash(Dictionary<string, string?> configuration, string key, string file)
    {
        if (!configuration.TryGetValue(key, out var text))
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration has no {Quoted.Value(key)} row, yet it has been used; BlockDb needs the hash algorithm. Allowed values: {string.Join(", ", HashNames.Select(h => h.Name))}. Nothing was changed.");
        }

        foreach (var (name, algorithm, _) in HashNames)
        {
            if (string.Equals(name, text, StringComparison.OrdinalIgnoreCase))
            {
                return (algorithm, text!);
            }
        }

        throw new BlockDbFormatException(
            $"{file} is a Duplicati local database whose Configuration {Quoted.Value(key)} is {Quoted.Value(text)}; allowed: {string.Join(", ", HashNames.Select(h => h.Name))} (Duplicati's HashFactory names). Nothing was changed.");
    }

    private static long? ReadLong(ISqliteConnection connection, string sql) =>
        connection.QueryText(sql) is { } text && long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) ? value : null;
}
