using BlockDb.Drivers;
using BlockDb.Layouts.Duplicati;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb;

/// <summary>
/// An in-place upgrade of a Duplicati local database (schema 19) that Duplicati could run as a step of its own: it drops
/// the two indexes whose every use a kept index serves, and keeps every table, column, row, the header, the
/// <c>Version</c> row and the other 21 indexes. No Duplicati query has to change, in text or in result; the upgraded file
/// is still a v19 file Duplicati opens (its upgrader checks no index) and BlockDb recognises.
/// <list type="bullet">
/// <item><c>BlockHashVolumeID</c> (Block: Hash, VolumeID). Every Duplicati statement that filters or joins <c>Block</c>
/// on <c>Hash</c> (with or without <c>VolumeID</c>) is served by the unique <c>BlockHashSize</c> (Hash, Size), which has
/// the same leading column and at most one row per (hash, size): among them recreate's
/// <c>SELECT DISTINCT "BlocklistHash"."Hash" FROM "BlocklistHash", "Block" WHERE "Block"."Hash" = "BlocklistHash"."Hash" AND "Block"."VolumeID" = @VolumeId</c>
/// and <c>SELECT "VolumeID" FROM "Block", (…) "A" WHERE "A"."Hash" = "Block"."Hash"</c> (LocalRecreateDatabase.cs
/// 1104, 1160), the backup's <c>SELECT DISTINCT "Block"."Hash" FROM "Block" WHERE "Block"."VolumeID" = @VolumeId AND "Block"."Hash" IN (SELECT "Hash" FROM "BlocklistHash")</c>
/// (LocalBackupDatabase.cs 1863; <c>Block_IndexByVolumeId</c> serves it) and collection's join of <c>Block</c> to
/// <c>BlocklistHash</c> on <c>Hash</c> (LocalDeleteDatabase.cs 211). Where the dropped index covered <c>VolumeID</c>, the
/// kept one adds one read of the row by its ID. Its UNIQUE form (files upgraded through Duplicati's script 11) forbade
/// one hash at two sizes in one volume; Duplicati's own <c>Schema.sql</c> has created it without UNIQUE since 2020, so no
/// rule Duplicati relies on goes with it. It is the second random-ordered text index every <c>Block</c> insert writes.</item>
/// <item><c>BlocksetEntry_BlocksetID</c> (BlocksetEntry: BlocksetID). <c>BlocksetEntry</c> is a WITHOUT ROWID table
/// whose primary key is (BlocksetID, Index), so the index repeats the key's first column: every lookup by
/// <c>BlocksetID</c> (restore, listing, delete, the consistency check) is a search of the primary key. Duplicati's own
/// DatabaseTool drops it when it downgrades a file below version 17 (<c>17. Remove index from blocksetentry.sql</c>).</item>
/// </list>
/// <c>BlockHashSize</c> stays: about 55 Duplicati statements compare a <c>Hash</c> column, and without the unique index
/// nothing would stop Duplicati's own inserts from adding a block twice. A larger <c>page_size</c> was measured and not
/// adopted (docs/BENCHMARKS.md, "Duplicati replay"). Source: duplicati/duplicati at 66cfb242,
/// <see href="https://github.com/duplicati/duplicati/tree/master/Duplicati/Library/Main/Database/Local"/>;
/// docs/DUPLICATI-FACTS.md §1.3-1.4.
/// </summary>
public static class DuplicatiUpgrade
{
    private static readonly string[] Dropped = ["BlockHashVolumeID", "BlocksetEntry_BlocksetID"];

    /// <summary>
    /// The upgrade as SQL Duplicati can run in its own transaction (in its upgrader, say): <c>DROP INDEX IF EXISTS</c> of
    /// each index, so running them again changes nothing.
    /// </summary>
    public static IReadOnlyList<string> Statements { get; } =
    [
        """DROP INDEX IF EXISTS "BlockHashVolumeID" """,
        """DROP INDEX IF EXISTS "BlocksetEntry_BlocksetID" """,
    ];

    /// <summary>
    /// What undoes <see cref="Statements"/>: each index as Duplicati's <c>Schema.sql</c> creates it (SQLite stores the
    /// same text, without <c>IF NOT EXISTS</c>), so a fresh file's schema is restored exactly. A file upgraded through
    /// Duplicati's script 11 had <c>BlockHashVolumeID</c> UNIQUE; <see cref="ApplyAsync"/> returns its exact text.
    /// </summary>
    public static IReadOnlyList<string> RevertStatements { get; } =
    [
        """CREATE INDEX IF NOT EXISTS "BlockHashVolumeID" ON "Block" ("Hash", "VolumeID")""",
        """CREATE INDEX IF NOT EXISTS "BlocksetEntry_BlocksetID" ON "BlocksetEntry" ("BlocksetID")""",
    ];

    /// <summary>
    /// Upgrades the Duplicati database <paramref name="options"/> opens, in one transaction, with no other connection
    /// to the file open (as Duplicati's own upgrader runs before anything else reads the file). Running it on an
    /// upgraded file changes nothing.
    /// </summary>
    /// <param name="options">The file (<see cref="BlockDbOptions.DataSource"/>) and the SQLite provider; not <see cref="BlockDbOptions.ReadOnly"/>.</param>
    /// <param name="cancellationToken">Cancels before the change starts.</param>
    /// <returns>The statements that recreate what this call dropped, each index's <c>CREATE</c> text exactly as the file
    /// stored it (Duplicati's own DDL, in the form this file had); empty when there was nothing to drop.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid, the provider is not a SQLite provider, or <see cref="BlockDbOptions.DataSource"/> names no existing file.</exception>
    /// <exception cref="BlockDbReadOnlyException"><see cref="BlockDbOptions.ReadOnly"/> is set.</exception>
    /// <exception cref="BlockDbConflictException">The file is a BlockDb file, not a Duplicati database.</exception>
    /// <exception cref="BlockDbFormatException">The file is empty, not one BlockDb opens, or a Duplicati file BlockDb refuses (<see cref="DuplicatiSchemaVersionException"/> for another schema version).</exception>
    /// <exception cref="BlockDbException">Another connection has the file open (<see cref="BlockDbException.SqliteErrorCode"/> 5, SQLITE_BUSY: Duplicati is running), or the database failed. Nothing was changed.</exception>
    public static Task<IReadOnlyList<string>> ApplyAsync(BlockDbOptions options, CancellationToken cancellationToken = default) =>
        RunAsync(options, nameof(ApplyAsync), Apply, cancellationToken);

    /// <summary>
    /// Undoes the upgrade on the Duplicati database <paramref name="options"/> opens: runs <see cref="RevertStatements"/>
    /// for each index the file lacks, in one transaction, with no other connection to the file open.
    /// </summary>
    /// <param name="options">As for <see cref="ApplyAsync"/>.</param>
    /// <param name="cancellationToken">Cancels before the change starts (an index build itself is not interrupted).</param>
    /// <returns>The names of the indexes created; empty when the file had both.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="BlockDbConfigurationException">As for <see cref="ApplyAsync"/>.</exception>
    /// <exception cref="BlockDbReadOnlyException">As for <see cref="ApplyAsync"/>.</exception>
    /// <exception cref="BlockDbConflictException">As for <see cref="ApplyAsync"/>.</exception>
    /// <exception cref="BlockDbFormatException">As for <see cref="ApplyAsync"/>.</exception>
    /// <exception cref="BlockDbException">As for <see cref="ApplyAsync"/>.</exception>
    public static Task<IReadOnlyList<string>> RevertAsync(BlockDbOptions options, CancellationToken cancellationToken = default) =>
        RunAsync(options, nameof(RevertAsync), Revert, cancellationToken);

    private static async Task<IReadOnlyList<string>> RunAsync(BlockDbOptions options, string operation, Func<ISqliteConnection, List<string>> change, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        var path = options.DataSource is { Length: > 0 } dataSource
            ? Path.GetFullPath(dataSource)
            : throw new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:DataSource", $"DuplicatiUpgrade.{operation}: BlockDb:DataSource is empty; give the path of the Duplicati database.");
        if (options.ReadOnly)
        {
            throw new BlockDbReadOnlyException($"DuplicatiUpgrade.{operation}", path);
        }

        // A missing or empty file would become a new BlockDb file if opened for writing: recognise it read-only first.
        if (!File.Exists(path))
        {
            throw new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:DataSource", $"DuplicatiUpgrade.{operation}: {Quoted.Path(path)} does not exist; the upgrade works on an existing Duplicati database. Nothing was written.");
        }

        var readOnly = options.Clone();
        readOnly.ReadOnly = true;
        await (await Open(readOnly, operation, path, cancellationToken).ConfigureAwait(false)).DisposeAsync().ConfigureAwait(false);

        cancellationToken.ThrowIfCancellationRequested();
        var database = await Open(options, operation, path, cancellationToken).ConfigureAwait(false);
        await using (database.ConfigureAwait(false))
        {
            cancellationToken.ThrowIfCancellationRequested();
            return await Task.Run(() => Exclusive(database, path, operation, change), CancellationToken.None).ConfigureAwait(false);
        }
    }

    /// <summary>Opens the file through BlockDb (options validated, the file recognised) and requires the Duplicati layout.</summary>
    private static async Task<SqliteDatabase> Open(BlockDbOptions options, string operation, string path, CancellationToken cancellationToken)
    {
        var database = await new BlockDatabaseBuilder(options).BuildAsync(cancellationToken).ConfigureAwait(false);
        if (database is SqliteDatabase { Layout: BlockLayout.Duplicati } sqlite)
        {
            return sqlite;
        }

        await database.DisposeAsync().ConfigureAwait(false);
        throw database is SqliteDatabase other
            ? new BlockDbConflictException($"DuplicatiUpgrade.{operation}: {Quoted.Path(path)} is a BlockDb file of the {other.Layout} layout, not a Duplicati local database; the upgrade works on Duplicati databases only. Nothing was written.")
            : new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:Provider", $"DuplicatiUpgrade.{operation}: the provider {database.ProviderName} opens a {database.Engine} database; a Duplicati database is a SQLite file. Nothing was written.");
    }

    /// <summary>Runs the change in one write transaction of a connection in exclusive locking mode, after recognising the file again inside it.</summary>
    private static IReadOnlyList<string> Exclusive(SqliteDatabase database, string path, string operation, Func<ISqliteConnection, List<string>> change)
    {
        using var connection = database.OpenWorkConnection();
        connection.Execute(BlockDbSql.LockingModeExclusive);
        try
        {
            return Transactions.Run(
                connection,
                BlockDbSql.Begin.Text,
                () =>
                {
                    _ = DuplicatiFile.Recognize(connection, path)
                        ?? throw new BlockDbFormatException($"DuplicatiUpgrade.{operation}: {Quoted.Path(path)} is no longer a Duplicati local database (its Version table is gone). Nothing was changed.");
                    return change(connection);
                },
                retry: false);
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
        {
            throw new BlockDbException(
                $"DuplicatiUpgrade.{operation}: another connection has {Quoted.Path(path)} open (Duplicati running, or another program reading it), and the upgrade changes the schema only with the file to itself, as Duplicati's own upgrader does. Close it and run the upgrade again. Nothing was changed. ({e.Message})",
                e.SqliteErrorCode.Value,
                e.SqliteExtendedErrorCode ?? e.SqliteErrorCode.Value,
                e);
        }
    }

    private static List<string> Apply(ISqliteConnection connection)
    {
        var revert = new List<string>();
        for (var i = 0; i < Dropped.Length; i++)
        {
            if (IndexSql(connection, Dropped[i]) is { } sql)
            {
                revert.Add(sql);
                connection.Execute(Statements[i]);
            }
        }

        return revert;
    }

    private static List<string> Revert(ISqliteConnection connection)
    {
        var created = new List<string>();
        for (var i = 0; i < Dropped.Length; i++)
        {
            if (IndexSql(connection, Dropped[i]) is null)
            {
                connection.Execute(RevertStatements[i]);
                created.Add(Dropped[i]);
            }
        }

        return created;
    }

    private static string? IndexSql(ISqliteConnection connection, string name)
    {
        using var read = connection.Prepare(BlockDbSql.DuplicatiIndexSql);
        read.BindText(1, name);
        var sql = read.Step() ? read.ColumnText(0) : null;
        read.Reset();
        return sql;
    }
}
