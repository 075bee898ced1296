using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

// The schema's shape (facts §1.2-1.4): Duplicati's 19 tables and the File view with exactly its columns, the indexes
// BlockDb's correctness rests on, and the half-finished upgrade's message; read through pragma_table_info and
// pragma_index_list, names compared case-insensitively, never the sql text.
internal sealed partial record DuplicatiFile
{
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
}
