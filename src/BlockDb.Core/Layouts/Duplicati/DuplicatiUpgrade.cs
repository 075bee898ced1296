using BlockDb.Drivers;
using BlockDb.Layouts.Duplicati;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb;

/// <summary>
/// An in-place upgrade of a Duplicati local database (schema 19) that Duplicati could run as a step of its own: it drops
/// the index <c>BlocksetEntry_BlocksetID</c> and keeps every table, column, row, the header, the <c>Version</c> row and
/// the other 21 indexes. No Duplicati query changes, in text or in result; the upgraded file is still a v19 file Duplicati
/// opens (its upgrader checks no index) and BlockDb recognises.
/// <para>
/// Why no query changes: <c>BlocksetEntry</c> is a WITHOUT ROWID table whose primary key is (BlocksetID, Index), so the
/// index (BlocksetID) repeats the key's first column and holds the same (BlocksetID, Index) pairs in the same order. Every
/// Duplicati statement that used it (39 of its statements name <c>BlocksetEntry</c> at 66cfb242; every one that SQLite
/// 3.50.4 plans without statistics was compared before and after) now searches or scans the primary key, or the covering
/// <c>nnc_BlocksetEntry</c>, in the same place of the same plan: among them the blockset listings of restore and
/// recreate, <c>VerifyConsistency</c>'s entry counts and "blockset without entries" (LocalDatabase.cs 1901, 1939), the
/// delete's <c>DELETE FROM "BlocksetEntry" WHERE "BlocksetID" NOT IN (…)</c> (LocalDeleteDatabase.cs 192) and
/// recreate's missing-blocklist join (LocalRecreateDatabase.cs 1143). What goes is one more B-tree written per entry of
/// every new file. Duplicati's own DatabaseTool drops the same index when it downgrades a file below version 17
/// (<c>17. Remove index from blocksetentry.sql</c>).
/// </para>
/// <para>
/// What is kept, and why: <c>BlockHashVolumeID</c> (Block: Hash, VolumeID) is not dropped. The unique
/// <c>BlockHashSize</c> returns the same rows for every statement that uses it, but without statistics SQLite then plans
/// recreate's <c>GetBlockListsAsync</c> (<c>SELECT DISTINCT "BlocklistHash"."Hash" FROM "BlocklistHash", "Block" WHERE "Block"."Hash" = "BlocklistHash"."Hash" AND "Block"."VolumeID" = @VolumeId</c>,
/// LocalRecreateDatabase.cs 1104, run per volume by <c>repair</c>) with a full scan of <c>BlocklistHash</c> for each block
/// of the volume (3.7 to 6.7x slower at 50,000 blocks on SQLite 3.50.4 and 3.53.4, 1.8 to 2.4x with statistics, and
/// growing with the file). <c>BlockHashSize</c> stays: about 55
/// Duplicati statements compare a <c>Hash</c> column, and without it nothing stops a block being added twice. The page
/// size stays as Duplicati made it (docs/BENCHMARKS.md, "Duplicati replay").
/// </para>
/// Source: duplicati/duplicati at 66cfb242,
/// <see href="https://github.com/duplicati/duplicati/tree/master/Duplicati/Library/Main/Database/Local"/>;
/// docs/DUPLICATI-FACTS.md §1.3-1.4.
/// </summary>
public static class DuplicatiUpgrade
{
    private static readonly string[] Dropped = ["BlocksetEntry_BlocksetID"];

    /// <summary>
    /// The upgrade as SQL Duplicati can run in its own transaction (in its upgrader, say): Duplicati's own
    /// <c>DROP INDEX IF EXISTS</c> text (DatabaseTool script 17), so running it again changes nothing.
    /// </summary>
    public static IReadOnlyList<string> Statements { get; } =
    [
        """DROP INDEX IF EXISTS "BlocksetEntry_BlocksetID" """,
    ];

    /// <summary>
    /// What undoes <see cref="Statements"/>: the index exactly as Duplicati's <c>Schema.sql</c> (and its upgrade script
    /// 17) creates it, so the file's schema is restored exactly (SQLite stores the text without <c>IF NOT EXISTS</c>).
    /// </summary>
    public static IReadOnlyList<string> RevertStatements { get; } =
    [
        """CREATE INDEX IF NOT EXISTS "BlocksetEntry_BlocksetID" ON "BlocksetEntry" ("BlocksetID")""",
    ];

    /// <summary>
    /// Upgrades the Duplicati database <paramref name="options"/> opens, in one transaction, with no other connection
    /// to the file open (as Duplicati's own upgrader runs before anything else reads the file). Running it on an
    /// upgraded file changes nothing.
    /// </summary>
    /// <param name="options">The file (<see cref="BlockDbOptions.DataSource"/>) and the SQLite provider; not <see cref="BlockDbOptions.ReadOnly"/>.</param>
    /// <param name="cancellationToken">Cancels before the change starts.</param>
    /// <returns>The names of the indexes dropped; empty when the file was upgraded already.</returns>
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
        cancellationToken.ThrowIfCancellationRequested();
        var database = new BlockDatabaseBuilder(options).Build();
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
        var dropped = new List<string>();
        for (var i = 0; i < Dropped.Length; i++)
        {
            if (IndexExists(connection, Dropped[i]))
            {
                connection.Execute(Statements[i]);
                dropped.Add(Dropped[i]);
            }
        }

        return dropped;
    }

    private static List<string> Revert(ISqliteConnection connection)
    {
        var created = new List<string>();
        for (var i = 0; i < Dropped.Length; i++)
        {
            if (!IndexExists(connection, Dropped[i]))
            {
                connection.Execute(RevertStatements[i]);
                created.Add(Dropped[i]);
            }
        }

        return created;
    }

    private static bool IndexExists(ISqliteConnection connection, string name)
    {
        using var read = connection.Prepare(BlockDbSql.DuplicatiIndexExists);
        read.BindText(1, name);
        var exists = read.Step();
        read.Reset();
        return exists;
    }
}
