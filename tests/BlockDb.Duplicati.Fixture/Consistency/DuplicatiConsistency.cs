using System.Globalization;
using System.Text;
using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture.Consistency;

/// <summary>One thing the oracle found wrong.</summary>
/// <param name="Rule">The rule's name (one of <see cref="DuplicatiRule"/>).</param>
/// <param name="Message">What is wrong; for Duplicati's own checks, the message its <c>VerifyConsistency</c> throws.</param>
public sealed record ConsistencyFinding(string Rule, string Message)
{
    /// <inheritdoc/>
    public override string ToString() => $"{Rule}: {Message}";
}

/// <summary>The rules <see cref="DuplicatiConsistency"/> applies, by name.</summary>
public static class DuplicatiRule
{
    // LocalDatabase.VerifyConsistency (LD 1797-2181, facts §8), in its order.

    /// <summary>A blockset named by a File row whose length is not the sum of its entries' block sizes.</summary>
    public const string Lengths = nameof(Lengths);

    /// <summary>More BlocklistHash rows than distinct (BlocksetID, Index).</summary>
    public const string DuplicateBlocklistHashes = nameof(DuplicateBlocklistHashes);

    /// <summary>A blockset of more than one entry without ceil(n / HPB) BlocklistHash rows.</summary>
    public const string BlocklistHashCount = nameof(BlocklistHashCount);

    /// <summary>A blockset of positive length without entries.</summary>
    public const string BlocksetWithoutEntries = nameof(BlocksetWithoutEntries);

    /// <summary>A FileLookup row naming a blockset that does not exist (and not −100/−200).</summary>
    public const string FileWithoutBlockset = nameof(FileWithoutBlockset);

    /// <summary>A Fileset whose volume is not a Files volume that is not Deleted.</summary>
    public const string FilesetWithoutVolume = nameof(FilesetWithoutVolume);

    /// <summary>A Files volume, not Deleted or Deleting, that no Fileset names.</summary>
    public const string FilesVolumeWithoutFileset = nameof(FilesVolumeWithoutFileset);

    /// <summary>A FilesetEntry naming a FileLookup row that does not exist.</summary>
    public const string FilesetEntryWithoutFile = nameof(FilesetEntryWithoutFile);

    /// <summary>A fileset whose listed paths differ in number from its FilesetEntry rows (verifyfilelists).</summary>
    public const string FilesetDifferences = nameof(FilesetDifferences);

    // What Duplicati relies on without checking (facts §10), and the file's identity.

    /// <summary>The header's application_id or user_version is not 0.</summary>
    public const string Header = nameof(Header);

    /// <summary>Not exactly one object named "version" (any case), or a version other than 19.</summary>
    public const string Version = nameof(Version);

    /// <summary>A table, column, index or view differs from the DDL, one is missing, or an unknown object exists.</summary>
    public const string Schema = nameof(Schema);

    /// <summary>Configuration has no valid <c>blocksize</c> (or an unknown <c>blockhash</c>) in a file that has been used.</summary>
    public const string Configuration = nameof(Configuration);

    /// <summary>A Block larger than the block size (Duplicati's next backup refuses: BlockSizeChangeNotSupported).</summary>
    public const string BlockLargerThanBlocksize = nameof(BlockLargerThanBlocksize);

    /// <summary>A BlocksetEntry naming a Block that does not exist.</summary>
    public const string EntryBlockMissing = nameof(EntryBlockMissing);

    /// <summary>Entries not numbered 0..n−1, not ceil(Length / blocksize) of them, or a block whose size is not the one its position gives.</summary>
    public const string EntryPosition = nameof(EntryPosition);

    /// <summary>A BlocklistHash value that is not the hash of the entries' binary hashes it covers, or rows not numbered 0..k−1.</summary>
    public const string BlocklistHashValue = nameof(BlocklistHashValue);

    /// <summary>A BlocklistHash row of a blockset of 0 or 1 entries, or of no blockset.</summary>
    public const string BlocklistHashStray = nameof(BlocklistHashStray);

    /// <summary>A blocklist block that is not a Block row of its hash and size.</summary>
    public const string BlocklistBlockMissing = nameof(BlocklistBlockMissing);

    /// <summary>An empty FullHash, or two blocksets with the same (FullHash, Length).</summary>
    public const string FullHash = nameof(FullHash);

    /// <summary>A Remotevolume Type or State that is not one of Duplicati's enum names.</summary>
    public const string VolumeTypeOrState = nameof(VolumeTypeOrState);

    /// <summary>A Block whose VolumeID is not a Blocks volume (or is a Deleted one).</summary>
    public const string BlockVolume = nameof(BlockVolume);

    /// <summary>A Metadataset naming a missing blockset, or a FileLookup naming a missing Metadataset.</summary>
    public const string Metadata = nameof(Metadata);
}

/// <summary>Options of <see cref="DuplicatiConsistency.Check"/>.</summary>
public sealed record DuplicatiConsistencyOptions
{
    /// <summary>Run Duplicati's file-list check per fileset (its <c>verifyfilelists</c>; default true).</summary>
    public bool VerifyFilelists { get; init; } = true;

    /// <summary>Duplicati's lax repair variant: skip the fileset/volume checks (default false).</summary>
    public bool LaxForRepair { get; init; }

    /// <summary>Objects besides Duplicati's that the schema rule accepts (e.g. a library's own table); default none.</summary>
    public Func<string, bool>? AllowExtraObject { get; init; }

    /// <summary>Indexes of Duplicati's schema the schema rule accepts as absent (e.g. the ones an in-place upgrade drops); default none.</summary>
    public Func<string, bool>? AllowMissingIndex { get; init; }

    /// <summary>Detail lines per finding (default 5).</summary>
    public int MaxDetails { get; init; } = 5;
}

/// <summary>
/// An oracle of Duplicati's rules on a local database, independent of the code that writes it: every check of
/// <c>LocalDatabase.VerifyConsistency</c> (<c>Duplicati/Library/Main/Database/Local/LocalDatabase.cs</c> 1797-2181,
/// facts §8) with Duplicati's messages, each run on its own (Duplicati stops at the first), then the invariants Duplicati
/// relies on without checking (facts §10): no block larger than <c>blocksize</c>, entry sizes fixed by their position,
/// blocklist blocks present as Block rows, blocklist hash values equal to the hash of the entries' hashes recomputed
/// here, FullHash present and (FullHash, Length) unique, volume Type/State names valid, header application_id and
/// user_version 0, one <c>Version</c> object at 19, and the schema's shape equal to <see cref="DuplicatiSchema"/>'s DDL
/// (either form of <c>BlockHashVolumeID</c>). The block size and hash come from <c>Configuration</c>.
/// </summary>
public static class DuplicatiConsistency
{
    /// <summary>Opens the file read-only (Microsoft.Data.Sqlite, no pool) and checks it.</summary>
    /// <param name="path">A Duplicati local database.</param>
    /// <param name="options">Options (null: defaults).</param>
    /// <returns>The findings; empty when consistent.</returns>
    public static IReadOnlyList<ConsistencyFinding> CheckFile(string path, DuplicatiConsistencyOptions? options = null)
    {
        using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Mode = SqliteOpenMode.ReadOnly, Pooling = false }.ToString());
        connection.Open();
        return Check(connection, options);
    }

    /// <summary>Checks the database on an open connection, in one read transaction.</summary>
    /// <param name="connection">An open connection with no transaction.</param>
    /// <param name="options">Options (null: defaults).</param>
    /// <returns>The findings; empty when consistent.</returns>
    public static IReadOnlyList<ConsistencyFinding> Check(SqliteConnection connection, DuplicatiConsistencyOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        options ??= new DuplicatiConsistencyOptions();
        using var transaction = connection.BeginTransaction(deferred: true);
        var check = new Checker(connection, transaction, options);
        check.Run();
        return check.Findings;
    }

    private sealed class Checker(SqliteConnection connection, SqliteTransaction transaction, DuplicatiConsistencyOptions options)
    {
        private static readonly string[] VolumeTypes = Enum.GetNames<DuplicatiVolumeType>();
        private static readonly string[] VolumeStates = Enum.GetNames<DuplicatiVolumeState>();

        public List<ConsistencyFinding> Findings { get; } = [];

        public void Run()
        {
            CheckHeader();
            var schemaOk = CheckVersionAndSchema();
            if (!schemaOk)
            {
                // The other rules read the tables by their columns; on a changed schema they would only add noise.
                return;
            }

            var (blocksize, hashName) = ReadConfiguration();
            VerifyConsistency(blocksize, hashName);
            if (blocksize > 0 && hashName is not null)
            {
                CheckBlocks(blocksize, hashName);
            }

            CheckFullHashes();
            CheckVolumes();
            CheckMetadata();
        }

        private void Add(string rule, string message) => Findings.Add(new ConsistencyFinding(rule, message));

        private void CheckHeader()
        {
            var applicationId = Long("PRAGMA application_id");
            var userVersion = Long("PRAGMA user_version");
            if (applicationId != 0 || userVersion != 0)
            {
                Add(DuplicatiRule.Header, $"The header holds application_id {applicationId} and user_version {userVersion}; Duplicati's files hold 0 and 0.");
            }
        }

        /// <summary>Duplicati's version read (DatabaseUpgrader.cs 200-231) and the schema's shape against a file made from the DDL.</summary>
        private bool CheckVersionAndSchema()
        {
            var named = Long("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'Version'");
            if (named != 1)
            {
                Add(DuplicatiRule.Version, $"{named} schema objects are named 'version' (any letter case); Duplicati reads its version only when there is exactly one (else DatabaseFormatError).");
                return false;
            }

            var version = Long("""SELECT max("Version") FROM "Version" """, -1);
            if (version != DuplicatiConstants.SchemaVersion)
            {
                Add(DuplicatiRule.Version, $"The Version table says {version}; this fixture knows schema {DuplicatiConstants.SchemaVersion} only.");
            }

            using var reference = new SqliteConnection("Data Source=:memory:");
            reference.Open();
            DuplicatiSchema.Create(reference);
            var expected = Shape(reference, null);
            var actual = Shape(connection, transaction);
            var structural = false;
            foreach (var (name, shape) in expected)
            {
                if (!actual.TryGetValue(name, out var found))
                {
                    if (shape.StartsWith("index", StringComparison.Ordinal) && options.AllowMissingIndex?.Invoke(name) == true)
                    {
                        continue;
                    }

                    Add(DuplicatiRule.Schema, $"Missing {shape.Split('|')[0]} \"{name}\".");
                    structural |= !shape.StartsWith("index", StringComparison.Ordinal);
                }
                else if (found != shape && !(name.Equals("BlockHashVolumeID", StringComparison.OrdinalIgnoreCase) && found == shape.Replace("unique=0", "unique=1", StringComparison.Ordinal)))
                {
                    Add(DuplicatiRule.Schema, $"\"{name}\" differs from Duplicati's: expected {shape}, found {found}.");
                    structural |= !shape.StartsWith("index", StringComparison.Ordinal);
                }
            }

            foreach (var name in actual.Keys.Where(n => !expected.ContainsKey(n)))
            {
                if (options.AllowExtraObject?.Invoke(name) != true)
                {
                    Add(DuplicatiRule.Schema, $"Unknown schema object \"{name}\" ({actual[name].Split('|')[0]}): not in Duplicati's schema.");
                }
            }

            // A missing index or an extra object leaves the tables readable; a changed table or view does not.
            return !structural && version == DuplicatiConstants.SchemaVersion;
        }

        /// <summary>
        /// Each object's shape as text, keyed by name (case-insensitive, as SQLite compares names): a table's columns
        /// (name, type, not null, default, primary key position) and whether it has a rowid; an index's table, columns,
        /// uniqueness and origin; a view's columns; a trigger as itself. <c>sqlite_*</c> objects are skipped.
        /// </summary>
        private static Dictionary<string, string> Shape(SqliteConnection c, SqliteTransaction? t)
        {
            var objects = new List<(string Type, string Name, string Table)>();
            using (var list = Command(c, t, "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))
            using (var reader = list.ExecuteReader())
            {
                while (reader.Read())
                {
                    objects.Add((reader.GetString(0), reader.GetString(1), reader.GetString(2)));
                }
            }

            var shapes = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            foreach (var (type, name, table) in objects)
            {
                var text = new StringBuilder(type).Append('|');
                switch (type)
                {
                    case "table":
                    case "view":
                        text.Append(Rows(c, t, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(@name)", name));
                        if (type == "table")
                        {
                            text.Append("|withoutrowid=").Append(Rows(c, t, "SELECT wr FROM pragma_table_list WHERE name = @name AND schema = 'main'", name));
                        }

                        break;
                    case "index":
                        text.Append("on=").Append(table.ToUpperInvariant())
                            .Append("|cols=").Append(Rows(c, t, "SELECT name FROM pragma_index_info(@name) ORDER BY seqno", name))
                            .Append("|unique=").Append(Rows(c, t, $"SELECT \"unique\" FROM pragma_index_list('{table.Replace("'", "''", StringComparison.Ordinal)}') WHERE name = @name", name));
                        break;
                    default:
                        text.Append(name);
                        break;
                }

                shapes[name] = text.ToString();
            }

            return shapes;
        }

        private static string Rows(SqliteConnection c, SqliteTransaction? t, string sql, string name)
        {
            using var command = Command(c, t, sql);
            command.Parameters.AddWithValue("@name", name);
            using var reader = command.ExecuteReader();
            var rows = new List<string>();
            while (reader.Read())
            {
                rows.Add(string.Join(",", Enumerable.Range(0, reader.FieldCount).Select(i => reader.IsDBNull(i) ? "null" : Convert.ToString(reader.GetValue(i), CultureInfo.InvariantCulture)!.ToUpperInvariant())));
            }

            return string.Join(";", rows);
        }

        private (int Blocksize, string? HashName) ReadConfiguration()
        {
            var rows = DuplicatiConfiguration.ReadRows(connection, transaction);
            var used = rows.Count > 0 || Long("""SELECT COUNT(*) FROM "Block" """) > 0;
            var blocksize = 0;
            if (!rows.TryGetValue("blocksize", out var text) || !int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out blocksize) || blocksize < DuplicatiConstants.MinimumBlocksize)
            {
                if (used)
                {
                    Add(DuplicatiRule.Configuration, text is null
                        ? "Configuration has no 'blocksize' row, yet the file has been used (Duplicati writes it at the first backup)."
                        : $"Configuration's 'blocksize' is '{text}': not a whole number of bytes of at least {DuplicatiConstants.MinimumBlocksize}.");
                }

                blocksize = 0;
            }

            var hashName = rows.TryGetValue("blockhash", out var hash) ? hash : "SHA256";
            try
            {
                _ = DuplicatiHash.SizeOf(hashName);
            }
            catch (ArgumentException)
            {
                Add(DuplicatiRule.Configuration, $"Configuration's 'blockhash' is '{hashName}': not a hash Duplicati knows.");
                return (blocksize, null);
            }

            return (blocksize, hashName);
        }

        /// <summary>Each check of Duplicati's <c>VerifyConsistencyInnerAsync</c>, written anew, with its message.</summary>
        private void VerifyConsistency(int blocksize, string? hashName)
        {
            // 1. Lengths of blocksets named by a File row: stored Length against the sum of the entries' block sizes
            // (a missing block adds nothing; a blockset with no entries sums to 0).
            var lengths = Table(
                """
                SELECT "F"."Path", "S"."Length", IFNULL("Sum"."Bytes", 0), "S"."ID"
                FROM "Blockset" "S"
                JOIN "File" "F" ON "F"."BlocksetID" = "S"."ID"
                LEFT JOIN (SELECT "E"."BlocksetID" AS "ID", SUM("B"."Size") AS "Bytes" FROM "BlocksetEntry" "E" LEFT JOIN "Block" "B" ON "B"."ID" = "E"."BlockID" GROUP BY "E"."BlocksetID") "Sum" ON "Sum"."ID" = "S"."ID"
                WHERE IFNULL("Sum"."Bytes", 0) != "S"."Length"
                """);
            if (lengths.Count > 0)
            {
                var text = new StringBuilder("Found inconsistency in the following files while validating database: \n");
                foreach (var row in lengths.Take(5))
                {
                    text.Append(CultureInfo.InvariantCulture, $"{row[0]}, actual size {row[1]}, dbsize {row[2]}, blocksetid: {row[3]}\n");
                }

                if (lengths.Count > 5)
                {
                    text.Append(CultureInfo.InvariantCulture, $"... and {lengths.Count - 5} more");
                }

                Add(DuplicatiRule.Lengths, text.Append(". Run repair to fix it.").ToString());
            }

            // 2. Duplicate (BlocksetID, Index) among BlocklistHash rows.
            var all = Long("""SELECT COUNT(*) FROM "BlocklistHash" """);
            var distinct = Long("""SELECT COUNT(*) FROM (SELECT DISTINCT "BlocksetID", "Index" FROM "BlocklistHash")""");
            if (all != distinct)
            {
                Add(DuplicatiRule.DuplicateBlocklistHashes, $"Found {all} blocklist hashes, but there should be {distinct}. Run repair to fix it.");
            }

            // 3. Per blockset with more than one entry: ceil(entries / HPB) BlocklistHash rows.
            if (blocksize > 0 && hashName is not null)
            {
                var perList = blocksize / DuplicatiHash.SizeOf(hashName);
                using var command = Command(
                    """
                    SELECT COUNT(*) FROM (SELECT "BlocksetID", COUNT(*) AS "Entries" FROM "BlocksetEntry" GROUP BY "BlocksetID") "N"
                    LEFT JOIN (SELECT "BlocksetID", COUNT(*) AS "Lists" FROM "BlocklistHash" GROUP BY "BlocksetID") "L" ON "L"."BlocksetID" = "N"."BlocksetID"
                    WHERE "N"."Entries" > 1 AND ("N"."Entries" + @PerList - 1) / @PerList != IFNULL("L"."Lists", 0)
                    """);
                command.Parameters.AddWithValue("@PerList", perList);
                var missing = (long)command.ExecuteScalar()!;
                if (missing != 0)
                {
                    Add(DuplicatiRule.BlocklistHashCount, $"Found {missing} file(s) with missing blocklist hashes");
                }
            }

            // 4. A blockset of positive length with no entries.
            if (Long("""SELECT COUNT(*) FROM "Blockset" WHERE "Length" > 0 AND "ID" NOT IN (SELECT "BlocksetID" FROM "BlocksetEntry")""") != 0)
            {
                Add(DuplicatiRule.BlocksetWithoutEntries, "Detected non-empty blocksets with no associated blocks!");
            }

            // 5. A FileLookup row naming no blockset (folders −100 and links −200 aside).
            if (Long($"""SELECT COUNT(*) FROM "FileLookup" WHERE "BlocksetID" NOT IN ({DuplicatiConstants.FolderBlocksetId}, {DuplicatiConstants.SymlinkBlocksetId}) AND "BlocksetID" NOT IN (SELECT "ID" FROM "Blockset")""") != 0)
            {
                Add(DuplicatiRule.FileWithoutBlockset, "Detected files associated with non-existing blocksets!");
            }

            // 6. Filesets and Files volumes that do not name each other (not in the lax repair variant).
            if (!options.LaxForRepair)
            {
                var lost = Table("""SELECT "ID", "Timestamp", "VolumeID" FROM "Fileset" WHERE "VolumeID" NOT IN (SELECT "ID" FROM "Remotevolume" WHERE "Type" = 'Files' AND "State" != 'Deleted')""");
                if (lost.Count == 1)
                {
                    Add(DuplicatiRule.FilesetWithoutVolume, $"Detected 1 fileset with missing volume: FilesetId = {lost[0][0]}, Time = ({Time(lost[0][1])}), unmatched VolumeID {lost[0][2]}");
                }
                else if (lost.Count > 1)
                {
                    Add(DuplicatiRule.FilesetWithoutVolume, $"Detected {lost.Count} filesets with missing volumes");
                }

                var unused = Table("""SELECT "ID", "Name", "State" FROM "Remotevolume" WHERE "Type" = 'Files' AND "State" NOT IN ('Deleted', 'Deleting') AND "ID" NOT IN (SELECT "VolumeID" FROM "Fileset")""");
                if (unused.Count == 1)
                {
                    Add(DuplicatiRule.FilesVolumeWithoutFileset, $"Detected 1 volume with missing filesets: VolumeId = {unused[0][0]}, Name = {unused[0][1]}, State = {unused[0][2]}");
                }
                else if (unused.Count > 1)
                {
                    Add(DuplicatiRule.FilesVolumeWithoutFileset, $"Detected {unused.Count} volumes with missing filesets");
                }
            }

            // 7. FilesetEntry rows naming no FileLookup row; Duplicati lists up to 10 filesets by version number.
            var versions = Table("""SELECT "ID", "Timestamp" FROM "Fileset" ORDER BY "Timestamp" DESC""");
            var orphans = Long("""SELECT COUNT(*) FROM "FilesetEntry" WHERE "FileID" NOT IN (SELECT "ID" FROM "FileLookup")""");
            if (orphans != 0)
            {
                var ids = Table("""SELECT DISTINCT "FilesetID" FROM "FilesetEntry" WHERE "FileID" NOT IN (SELECT "ID" FROM "FileLookup") LIMIT 11""").Select(r => r[0]).ToList();
                var lines = versions.Select((v, i) => (Id: v[0], Line: $"Fileset {i}: {Time(v[1])} (id = {v[0]})")).Where(v => ids.Take(10).Contains(v.Id)).Select(v => v.Line).ToList();
                if (lines.Count == 0)
                {
                    Add(DuplicatiRule.FilesetEntryWithoutFile, $"Detected {orphans} file(s) in FilesetEntry without corresponding FileLookup entry");
                }
                else
                {
                    if (ids.Count > 10)
                    {
                        lines.Add("... and more");
                    }

                    Add(DuplicatiRule.FilesetEntryWithoutFile, $"Detected {orphans} file(s) in FilesetEntry without corresponding FileLookup entry in the following filesets:\n{string.Join("\n", lines)}");
                }
            }

            // 8. verifyfilelists: per fileset, the paths Duplicati can list (files whose data and metadata blocksets are
            // absent, empty or start at Index 0; folders and links whose metadata blockset has an Index-0 entry with its
            // block) must number its FilesetEntry rows.
            if (options.VerifyFilelists)
            {
                var errors = new List<string>();
                using var listed = Command(
                    """
                    SELECT COUNT(*) FROM (
                        SELECT "F"."Path" FROM "FilesetEntry" "E" JOIN "File" "F" ON "F"."ID" = "E"."FileID"
                        LEFT JOIN "Metadataset" "M" ON "M"."ID" = "F"."MetadataID"
                        WHERE "E"."FilesetID" = @Fileset AND "F"."BlocksetID" >= 0
                          AND (NOT EXISTS (SELECT 1 FROM "Blockset" "S" WHERE "S"."ID" = "F"."BlocksetID")
                               OR NOT EXISTS (SELECT 1 FROM "BlocksetEntry" "X" WHERE "X"."BlocksetID" = "F"."BlocksetID")
                               OR EXISTS (SELECT 1 FROM "BlocksetEntry" "X" WHERE "X"."BlocksetID" = "F"."BlocksetID" AND "X"."Index" = 0))
                          AND ("M"."ID" IS NULL
                               OR NOT EXISTS (SELECT 1 FROM "Blockset" "S" WHERE "S"."ID" = "M"."BlocksetID")
                               OR NOT EXISTS (SELECT 1 FROM "BlocksetEntry" "X" WHERE "X"."BlocksetID" = "M"."BlocksetID")
                               OR EXISTS (SELECT 1 FROM "BlocksetEntry" "X" WHERE "X"."BlocksetID" = "M"."BlocksetID" AND "X"."Index" = 0))
                        UNION
                        SELECT "F"."Path" FROM "FilesetEntry" "E" JOIN "File" "F" ON "F"."ID" = "E"."FileID"
                        JOIN "Metadataset" "M" ON "M"."ID" = "F"."MetadataID" JOIN "Blockset" "S" ON "S"."ID" = "M"."BlocksetID"
                        JOIN "BlocksetEntry" "X" ON "X"."BlocksetID" = "M"."BlocksetID" AND "X"."Index" = 0 JOIN "Block" "B" ON "B"."ID" = "X"."BlockID"
                        WHERE "E"."FilesetID" = @Fileset AND "F"."BlocksetID" IN (-100, -200))
                    """);
                var fileset = listed.Parameters.Add("@Fileset", SqliteType.Integer);
                using var stored = Command("""SELECT COUNT(*) FROM "FilesetEntry" WHERE "FilesetID" = @Fileset""");
                var storedFileset = stored.Parameters.Add("@Fileset", SqliteType.Integer);
                for (var i = 0; i < versions.Count; i++)
                {
                    fileset.Value = storedFileset.Value = versions[i][0];
                    var found = (long)listed.ExecuteScalar()!;
                    var expected = (long)stored.ExecuteScalar()!;
                    if (found != expected)
                    {
                        errors.Add($"Unexpected difference in fileset version {i}: {Time(versions[i][1])} (database id: {versions[i][0]}), found {found} entries, but expected {expected}");
                    }
                }

                if (errors.Count > 0)
                {
                    Add(DuplicatiRule.FilesetDifferences, string.Join("\n\r", errors));
                }
            }
        }

        /// <summary>
        /// One pass over every entry in (BlocksetID, Index) order: positions, sizes and blocks; the blocklists rebuilt
        /// from the entries' binary hashes (HPB hashes each) and hashed, against the BlocklistHash rows, each of which
        /// must also be a Block of its hash and size.
        /// </summary>
        private void CheckBlocks(int blocksize, string hashName)
        {
            var larger = Table($"""SELECT "ID", "Size" FROM "Block" WHERE "Size" > {blocksize} ORDER BY "ID" """);
            if (larger.Count > 0)
            {
                Add(DuplicatiRule.BlockLargerThanBlocksize, $"{larger.Count} block(s) larger than the block size {blocksize}: {Details(larger.Select(r => $"Block {r[0]} of {r[1]} bytes"))}");
            }

            var hashSize = DuplicatiHash.SizeOf(hashName);
            var perList = blocksize / hashSize;
            var lists = new Dictionary<long, List<(long Index, string Hash)>>();
            foreach (var row in Table("""SELECT "BlocksetID", "Index", "Hash" FROM "BlocklistHash" ORDER BY "BlocksetID", "Index" """))
            {
                var id = (long)row[0];
                if (!lists.TryGetValue(id, out var l))
                {
                    lists[id] = l = [];
                }

                l.Add(((long)row[1], (string)row[2]));
            }

            var missingBlocks = new List<string>();
            var badPositions = new List<string>();
            var badValues = new List<string>();
            var missingLists = new List<string>();
            var stray = new List<string>();
            using var blockExists = Command("""SELECT COUNT(*) FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""");
            var existsHash = blockExists.Parameters.Add("@Hash", SqliteType.Text);
            var existsSize = blockExists.Parameters.Add("@Size", SqliteType.Integer);

            var buffer = new byte[perList * hashSize];
            var digest = new byte[64];
            var current = long.MinValue;
            long length = 0, count = 0, used = 0;
            var broken = false;
            var computed = new List<(string Hash, int Size)>();

            void Finish()
            {
                if (current == long.MinValue)
                {
                    return;
                }

                if (count != (length + blocksize - 1) / blocksize)
                {
                    badPositions.Add($"blockset {current}: {count} entries for {length} bytes, expected {(length + blocksize - 1) / blocksize}");
                }

                if (count > 1 && !broken)
                {
                    if (used > 0)
                    {
                        var n = DuplicatiHash.Hash(hashName, buffer.AsSpan(0, (int)used), digest);
                        computed.Add((Convert.ToBase64String(digest, 0, n), (int)used));
                    }

                    var stored = lists.GetValueOrDefault(current) ?? [];
                    for (var k = 0; k < Math.Max(stored.Count, computed.Count); k++)
                    {
                        if (k < stored.Count && stored[k].Index != k)
                        {
                            badValues.Add($"blockset {current}: blocklist hash rows not numbered 0..{stored.Count - 1} (row {k} has Index {stored[k].Index})");
                            break;
                        }

                        if (k >= stored.Count || k >= computed.Count || stored[k].Hash != computed[k].Hash)
                        {
                            badValues.Add($"blockset {current}: blocklist {k} is {(k < stored.Count ? stored[k].Hash : "missing")}, its entries hash to {(k < computed.Count ? computed[k].Hash : "nothing")}");
                            continue;
                        }

                        existsHash.Value = computed[k].Hash;
                        existsSize.Value = computed[k].Size;
                        if ((long)blockExists.ExecuteScalar()! == 0)
                        {
                            missingLists.Add($"blockset {current}: blocklist {k} ({computed[k].Hash}, {computed[k].Size} bytes) is no Block");
                        }
                    }
                }
                else if (count <= 1 && lists.ContainsKey(current))
                {
                    stray.Add($"blockset {current} has {count} entr{(count == 1 ? "y" : "ies")} and {lists[current].Count} blocklist hash row(s)");
                }

                lists.Remove(current);
            }

            using (var entries = Command(
                """
                SELECT "E"."BlocksetID", "E"."Index", "E"."BlockID", "B"."Hash", "B"."Size", "S"."Length"
                FROM "BlocksetEntry" "E" LEFT JOIN "Block" "B" ON "B"."ID" = "E"."BlockID" LEFT JOIN "Blockset" "S" ON "S"."ID" = "E"."BlocksetID"
                ORDER BY "E"."BlocksetID", "E"."Index"
                """))
            using (var reader = entries.ExecuteReader())
            {
                while (reader.Read())
                {
                    var id = reader.GetInt64(0);
                    if (id != current)
                    {
                        Finish();
                        (current, count, used, broken) = (id, 0, 0, false);
                        computed.Clear();
                        length = reader.IsDBNull(5) ? -1 : reader.GetInt64(5);
                        if (length < 0)
                        {
                            badPositions.Add($"blockset {id}: entries, but no Blockset row");
                            broken = true;
                        }
                    }

                    var index = reader.GetInt64(1);
                    if (index != count)
                    {
                        badPositions.Add($"blockset {id}: entry Index {index} where {count} was due");
                    }

                    count++;
                    if (reader.IsDBNull(3))
                    {
                        missingBlocks.Add($"blockset {id} Index {index} names Block {reader.GetInt64(2)}");
                        broken = true;
                        continue;
                    }

                    var expectedSize = Math.Min(blocksize, length - (index * blocksize));
                    if (length >= 0 && reader.GetInt64(4) != expectedSize)
                    {
                        badPositions.Add($"blockset {id} Index {index}: Block {reader.GetInt64(2)} has {reader.GetInt64(4)} bytes, its position gives {expectedSize}");
                    }

                    if (broken)
                    {
                        continue;
                    }

                    if (used + hashSize > buffer.Length)
                    {
                        var n = DuplicatiHash.Hash(hashName, buffer.AsSpan(0, (int)used), digest);
                        computed.Add((Convert.ToBase64String(digest, 0, n), (int)used));
                        used = 0;
                    }

                    if (!Convert.TryFromBase64String(reader.GetString(3), buffer.AsSpan((int)used, hashSize), out var written) || written != hashSize)
                    {
                        badValues.Add($"blockset {id} Index {index}: Block {reader.GetInt64(2)}'s hash is not {hashSize} bytes of base64");
                        broken = true;
                        continue;
                    }

                    used += hashSize;
                }
            }

            Finish();
            foreach (var (id, rows) in lists)
            {
                stray.Add($"blockset {id} has no entries and {rows.Count} blocklist hash row(s)");
            }

            Report(DuplicatiRule.EntryBlockMissing, "blockset entries name no Block", missingBlocks);
            Report(DuplicatiRule.EntryPosition, "blockset entries out of position", badPositions);
            Report(DuplicatiRule.BlocklistHashValue, "blocklist hashes that are not the hash of their entries", badValues);
            Report(DuplicatiRule.BlocklistHashStray, "blocklist hash rows of blocksets of 0 or 1 entries", stray);
            Report(DuplicatiRule.BlocklistBlockMissing, "blocklist blocks missing from Block", missingLists);
        }

        private void CheckFullHashes()
        {
            var empty = Long("""SELECT COUNT(*) FROM "Blockset" WHERE "FullHash" IS NULL OR "FullHash" = '' """);
            if (empty > 0)
            {
                Add(DuplicatiRule.FullHash, $"{empty} blockset(s) without a FullHash.");
            }

            var twins = Table("""SELECT "FullHash", "Length", COUNT(*) FROM "Blockset" GROUP BY "FullHash", "Length" HAVING COUNT(*) > 1""");
            Report(DuplicatiRule.FullHash, "(FullHash, Length) pairs held by more than one blockset", [.. twins.Select(r => $"{r[0]}, {r[1]} bytes: {r[2]} blocksets")]);
        }

        private void CheckVolumes()
        {
            var bad = Table("""SELECT "ID", "Name", "Type", "State" FROM "Remotevolume" """)
                .Where(r => !VolumeTypes.Contains((string)r[2], StringComparer.Ordinal) || !VolumeStates.Contains((string)r[3], StringComparer.Ordinal))
                .Select(r => $"volume {r[0]} ({r[1]}): Type '{r[2]}', State '{r[3]}'")
                .ToList();
            Report(DuplicatiRule.VolumeTypeOrState, "volumes whose Type or State is not one of Duplicati's names", bad);

            var homeless = Table("""SELECT "ID", "VolumeID" FROM "Block" WHERE "VolumeID" NOT IN (SELECT "ID" FROM "Remotevolume" WHERE "Type" = 'Blocks' AND "State" != 'Deleted') ORDER BY "ID" """);
            Report(DuplicatiRule.BlockVolume, "blocks whose VolumeID is no Blocks volume", [.. homeless.Select(r => $"Block {r[0]} in volume {r[1]}")]);
        }

        private void CheckMetadata()
        {
            var sets = Table("""SELECT "ID", "BlocksetID" FROM "Metadataset" WHERE "BlocksetID" NOT IN (SELECT "ID" FROM "Blockset")""");
            var files = Table("""SELECT "ID", "MetadataID" FROM "FileLookup" WHERE "MetadataID" NOT IN (SELECT "ID" FROM "Metadataset")""");
            Report(DuplicatiRule.Metadata, "metadata rows naming nothing", [.. sets.Select(r => $"Metadataset {r[0]} names Blockset {r[1]}"), .. files.Select(r => $"FileLookup {r[0]} names Metadataset {r[1]}")]);
        }

        private void Report(string rule, string what, List<string> details)
        {
            if (details.Count > 0)
            {
                Add(rule, $"{details.Count} {what}: {Details(details)}");
            }
        }

        private string Details(IEnumerable<string> lines)
        {
            var all = lines.ToList();
            var shown = string.Join("; ", all.Take(options.MaxDetails));
            return all.Count > options.MaxDetails ? $"{shown}; ... and {all.Count - options.MaxDetails} more" : shown;
        }

        private static string Time(object epochSeconds) =>
            DateTime.UnixEpoch.AddSeconds(Convert.ToInt64(epochSeconds, CultureInfo.InvariantCulture)).ToString("yyyy-MM-dd HH:mm:ss'Z'", CultureInfo.InvariantCulture);

        private SqliteCommand Command(string sql) => Command(connection, transaction, sql);

        private static SqliteCommand Command(SqliteConnection c, SqliteTransaction? t, string sql)
        {
            var command = c.CreateCommand();
            command.Transaction = t;
            command.CommandText = sql;
            return command;
        }

        private long Long(string sql, long absent = 0)
        {
            using var command = Command(sql);
            var value = command.ExecuteScalar();
            return value is null or DBNull ? absent : Convert.ToInt64(value, CultureInfo.InvariantCulture);
        }

        private List<object[]> Table(string sql)
        {
            using var command = Command(sql);
            using var reader = command.ExecuteReader();
            var rows = new List<object[]>();
            while (reader.Read())
            {
                var row = new object[reader.FieldCount];
                reader.GetValues(row);
                rows.Add(row);
            }

            return rows;
        }
    }
}
