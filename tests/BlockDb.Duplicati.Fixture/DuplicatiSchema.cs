using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture;

/// <summary>Which form of the index <c>BlockHashVolumeID</c> (Block: Hash, VolumeID) a file has.</summary>
public enum BlockHashVolumeIdForm
{
    /// <summary>A file created by Duplicati since 2020-05 (<c>Schema.sql</c>): a plain index.</summary>
    Fresh,

    /// <summary>A file created at schema 10 or older and upgraded through script 11: a UNIQUE index.</summary>
    UpgradedThrough11,
}

/// <summary>
/// A Duplicati local database at schema version 19, written from our own DDL text. The tables, columns, types,
/// constraints, the <c>File</c> view and the 22 index names and shapes follow Duplicati's
/// <c>Duplicati/Library/Main/Database/Local/Database schema/Schema.sql</c> at 66cfb242 (facts §1.2-1.4); the text is
/// ours. A fresh file has 43 objects in <c>sqlite_master</c>: 19 tables, 1 view, 22 named indexes and
/// <c>sqlite_autoindex_Configuration_1</c>. No triggers, no foreign keys, no AUTOINCREMENT; the header's
/// <c>application_id</c> and <c>user_version</c> stay 0.
/// </summary>
public static class DuplicatiSchema
{
    /// <summary>The 19 tables, in Duplicati's order.</summary>
    public static readonly IReadOnlyList<string> Tables =
    [
        "Operation", "Remotevolume", "IndexBlockLink", "Fileset", "FilesetEntry", "PathPrefix", "FileLookup",
        "BlocklistHash", "Blockset", "BlocksetEntry", "Block", "DeletedBlock", "DuplicateBlock", "Metadataset",
        "RemoteOperation", "LogData", "Version", "Configuration", "ChangeJournalData",
    ];

    /// <summary>The one view.</summary>
    public const string FileView = "File";

    /// <summary>The 22 named indexes (the automatic <c>sqlite_autoindex_Configuration_1</c> is not among them).</summary>
    public static readonly IReadOnlyList<string> Indexes =
    [
        "RemotevolumeNameOnly", "RemotevolumeName", "FilesetentryFileIdIndex", "nn_FilesetentryFile", "PathPrefixPrefix",
        "FileLookupPath", "nn_FileLookup_BlockMeta", "FileLookupMetadataID", "BlocklistHashBlocksetIDIndex",
        "BlocksetFullHash", "BlocksetEntry_IndexIdsBackwards", "nnc_BlocksetEntry", "BlocksetEntry_BlocksetID",
        "BlockHashSize", "Block_IndexByVolumeId", "BlockSize", "BlockHashVolumeID", "DeletedBlockHashSize",
        "DeletedBlockHashVolumeID", "UniqueBlockVolumeDuplicateBlock", "MetadatasetBlocksetID", "nnc_Metadataset",
    ];

    // One statement per line; identifiers quoted throughout ("Index" is a keyword).
    private const string TablesDdl = """
        CREATE TABLE "Operation" ("ID" INTEGER PRIMARY KEY, "Description" TEXT NOT NULL, "Timestamp" INTEGER NOT NULL);
        CREATE TABLE "Remotevolume" ("ID" INTEGER PRIMARY KEY, "OperationID" INTEGER NOT NULL, "Name" TEXT NOT NULL, "Type" TEXT NOT NULL, "Size" INTEGER NULL, "Hash" TEXT NULL, "State" TEXT NOT NULL, "VerificationCount" INTEGER NOT NULL, "DeleteGraceTime" INTEGER NOT NULL, "ArchiveTime" INTEGER NOT NULL, "LockExpirationTime" INTEGER NOT NULL);
        CREATE UNIQUE INDEX IF NOT EXISTS "RemotevolumeNameOnly" ON "Remotevolume" ("Name");
        CREATE UNIQUE INDEX "RemotevolumeName" ON "Remotevolume" ("Name", "State");
        CREATE TABLE "IndexBlockLink" ("IndexVolumeID" INTEGER NOT NULL, "BlockVolumeID" INTEGER NOT NULL);
        CREATE TABLE "Fileset" ("ID" INTEGER PRIMARY KEY, "OperationID" INTEGER NOT NULL, "VolumeID" INTEGER NOT NULL, "IsFullBackup" INTEGER NOT NULL, "Timestamp" INTEGER NOT NULL);
        CREATE TABLE "FilesetEntry" ("FilesetID" INTEGER NOT NULL, "FileID" INTEGER NOT NULL, "Lastmodified" INTEGER NOT NULL, CONSTRAINT "FilesetEntry_PK_FilesetIdFileId" PRIMARY KEY ("FilesetID", "FileID")) WITHOUT ROWID;
        CREATE INDEX "FilesetentryFileIdIndex" ON "FilesetEntry" ("FileID");
        CREATE INDEX "nn_FilesetentryFile" ON "FilesetEntry" ("FilesetID", "FileID");
        CREATE TABLE "PathPrefix" ("ID" INTEGER PRIMARY KEY, "Prefix" TEXT NOT NULL);
        CREATE UNIQUE INDEX "PathPrefixPrefix" ON "PathPrefix" ("Prefix");
        CREATE TABLE "FileLookup" ("ID" INTEGER PRIMARY KEY, "PrefixID" INTEGER NOT NULL, "Path" TEXT NOT NULL, "BlocksetID" INTEGER NOT NULL, "MetadataID" INTEGER NOT NULL);
        CREATE UNIQUE INDEX "FileLookupPath" ON "FileLookup" ("PrefixID", "Path", "BlocksetID", "MetadataID");
        CREATE INDEX "nn_FileLookup_BlockMeta" ON "FileLookup" ("BlocksetID", "MetadataID");
        CREATE INDEX "FileLookupMetadataID" ON "FileLookup" ("MetadataID");
        CREATE VIEW "File" AS SELECT "L"."ID" AS "ID", "P"."Prefix" || "L"."Path" AS "Path", "L"."BlocksetID" AS "BlocksetID", "L"."MetadataID" AS "MetadataID" FROM "FileLookup" "L", "PathPrefix" "P" WHERE "L"."PrefixID" = "P"."ID";
        CREATE TABLE "BlocklistHash" ("BlocksetID" INTEGER NOT NULL, "Index" INTEGER NOT NULL, "Hash" TEXT NOT NULL);
        CREATE UNIQUE INDEX "BlocklistHashBlocksetIDIndex" ON "BlocklistHash" ("BlocksetID", "Index");
        CREATE TABLE "Blockset" ("ID" INTEGER PRIMARY KEY, "Length" INTEGER NOT NULL, "FullHash" TEXT NOT NULL);
        CREATE UNIQUE INDEX "BlocksetFullHash" ON "Blockset" ("FullHash", "Length");
        CREATE TABLE "BlocksetEntry" ("BlocksetID" INTEGER NOT NULL, "Index" INTEGER NOT NULL, "BlockID" INTEGER NOT NULL, CONSTRAINT "BlocksetEntry_PK_IdIndex" PRIMARY KEY ("BlocksetID", "Index")) WITHOUT ROWID;
        CREATE INDEX "BlocksetEntry_IndexIdsBackwards" ON "BlocksetEntry" ("BlockID");
        CREATE INDEX "nnc_BlocksetEntry" ON "BlocksetEntry" ("Index", "BlocksetID", "BlockID");
        CREATE INDEX IF NOT EXISTS "BlocksetEntry_BlocksetID" ON "BlocksetEntry" ("BlocksetID");
        CREATE TABLE "Block" ("ID" INTEGER PRIMARY KEY, "Hash" TEXT NOT NULL, "Size" INTEGER NOT NULL, "VolumeID" INTEGER NOT NULL);
        CREATE UNIQUE INDEX "BlockHashSize" ON "Block" ("Hash", "Size");
        CREATE INDEX "Block_IndexByVolumeId" ON "Block" ("VolumeID");
        CREATE INDEX "BlockSize" ON "Block" ("Size");
        {BlockHashVolumeID}
        CREATE TABLE "DeletedBlock" ("ID" INTEGER PRIMARY KEY, "Hash" TEXT NOT NULL, "Size" INTEGER NOT NULL, "VolumeID" INTEGER NOT NULL);
        CREATE INDEX "DeletedBlockHashSize" ON "DeletedBlock" ("Hash", "Size");
        CREATE UNIQUE INDEX "DeletedBlockHashVolumeID" ON "DeletedBlock" ("Hash", "Size", "VolumeID");
        CREATE TABLE "DuplicateBlock" ("BlockID" INTEGER NOT NULL, "VolumeID" INTEGER NOT NULL);
        CREATE UNIQUE INDEX "UniqueBlockVolumeDuplicateBlock" ON "DuplicateBlock" ("BlockID", "VolumeID");
        CREATE TABLE "Metadataset" ("ID" INTEGER PRIMARY KEY, "BlocksetID" INTEGER NOT NULL, "Content" TEXT NULL);
        CREATE INDEX "MetadatasetBlocksetID" ON "Metadataset" ("BlocksetID");
        CREATE INDEX "nnc_Metadataset" ON "Metadataset" ("ID", "BlocksetID");
        CREATE TABLE "RemoteOperation" ("ID" INTEGER PRIMARY KEY, "OperationID" INTEGER NOT NULL, "Timestamp" INTEGER NOT NULL, "Operation" TEXT NOT NULL, "Path" TEXT NOT NULL, "Data" BLOB NULL);
        CREATE TABLE "LogData" ("ID" INTEGER PRIMARY KEY, "OperationID" INTEGER NOT NULL, "Timestamp" INTEGER NOT NULL, "Type" TEXT NOT NULL, "Message" TEXT NOT NULL, "Exception" TEXT NULL);
        CREATE TABLE "Version" ("ID" INTEGER PRIMARY KEY, "Version" INTEGER NOT NULL);
        CREATE TABLE "Configuration" ("Key" TEXT PRIMARY KEY NOT NULL, "Value" TEXT NOT NULL);
        CREATE TABLE "ChangeJournalData" ("ID" INTEGER PRIMARY KEY, "FilesetID" INTEGER NOT NULL, "VolumeName" TEXT NOT NULL, "JournalID" INTEGER NOT NULL, "NextUsn" INTEGER NOT NULL, "ConfigHash" TEXT NOT NULL);
        """;

    /// <summary>The DDL of a version-19 file with the chosen form of <c>BlockHashVolumeID</c>, ending with the <c>Version</c> row.</summary>
    /// <param name="form">Fresh (plain index) or upgraded through script 11 (UNIQUE).</param>
    /// <returns>SQL text of several statements.</returns>
    public static string Ddl(BlockHashVolumeIdForm form = BlockHashVolumeIdForm.Fresh) =>
        TablesDdl.Replace("{BlockHashVolumeID}", form == BlockHashVolumeIdForm.Fresh
            ? """CREATE INDEX "BlockHashVolumeID" ON "Block" ("Hash", "VolumeID");"""
            : """CREATE UNIQUE INDEX "BlockHashVolumeID" ON "Block" ("Hash", "VolumeID");""", StringComparison.Ordinal)
        + $"\nINSERT INTO \"Version\" (\"Version\") VALUES ({DuplicatiConstants.SchemaVersion});\n";

    /// <summary>
    /// Creates the schema on an open connection to an empty database, in one transaction. The Configuration table is
    /// left empty, as in a brand-new Duplicati file (the first backup writes it).
    /// </summary>
    /// <param name="connection">An open connection to an empty database.</param>
    /// <param name="form">The form of <c>BlockHashVolumeID</c>.</param>
    /// <exception cref="InvalidOperationException">The database already holds schema objects.</exception>
    public static void Create(SqliteConnection connection, BlockHashVolumeIdForm form = BlockHashVolumeIdForm.Fresh)
    {
        ArgumentNullException.ThrowIfNull(connection);
        using (var count = connection.CreateCommand())
        {
            count.CommandText = "SELECT COUNT(*) FROM sqlite_master";
            if ((long)count.ExecuteScalar()! != 0)
            {
                throw new InvalidOperationException("The database is not empty: DuplicatiSchema.Create writes a new file only.");
            }
        }

        using var transaction = connection.BeginTransaction();
        using (var ddl = connection.CreateCommand())
        {
            ddl.Transaction = transaction;
            ddl.CommandText = Ddl(form);
            ddl.ExecuteNonQuery();
        }

        transaction.Commit();
    }

    /// <summary>
    /// Creates a new Duplicati file at <paramref name="path"/>: opened as Duplicati opens it (its pragmas, so the file is
    /// in WAL mode), the schema written, the connection closed.
    /// </summary>
    /// <param name="path">A path where no file exists.</param>
    /// <param name="form">The form of <c>BlockHashVolumeID</c>.</param>
    /// <param name="configuration">Configuration rows to write as a first backup would (null: none, as a never-used file).</param>
    /// <exception cref="IOException">A file exists at the path.</exception>
    public static void CreateFile(string path, BlockHashVolumeIdForm form = BlockHashVolumeIdForm.Fresh, DuplicatiConfiguration? configuration = null)
    {
        if (File.Exists(path))
        {
            throw new IOException($"'{path}' exists: DuplicatiSchema.CreateFile writes a new file only.");
        }

        using var connection = DuplicatiConnection.Open(path);
        Create(connection, form);
        if (configuration is not null)
        {
            using var transaction = connection.BeginTransaction();
            configuration.Write(connection, transaction);
            transaction.Commit();
        }
    }
}
