using System.Globalization;
using BlockDb;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.Fixture.Replay;
using BlockDb.Duplicati.Fixture.Source;
using BlockDb.Duplicati.InPlace;
using Microsoft.Data.Sqlite;

/// <summary>
/// The child processes of the Duplicati durability tests (issue 24). Every mode backs up the same synthetic source as
/// the test: <see cref="Source"/> (1 KiB blocks, seed and file count from the arguments).
/// <list type="bullet">
/// <item><c>dup-shared &lt;db&gt; &lt;seed&gt; &lt;files&gt;</c>: backups v0 and v1 through <see cref="BlockDbBackupDatabase"/>
/// (Duplicati's statements and a BlockDb session in one transaction, Duplicati's commit points); prints "READY", then
/// "COMMITTING &lt;counts&gt;" inside each transaction just before it commits and "COMMITTED" after, and "DONE".</item>
/// <item><c>dup-writer &lt;db&gt; &lt;seed&gt; &lt;files&gt;</c>: backups v1 and v2 by Duplicati's own statements (its long
/// deferred transaction); prints "READY", "BACKUP &lt;v&gt;" after each, and "DONE"; a SQLITE_BUSY ends it with
/// "BUSY &lt;extended code&gt;" and exit code 3 (what is not committed is rolled back, as Duplicati's dispose does).</item>
/// <item><c>blockdb-beside &lt;db&gt; &lt;provider&gt; &lt;seed&gt;</c>: a standalone BlockDb session on the same file registers
/// a volume and adds 40 files of its own, committing each; a SQLITE_BUSY is printed "BUSY &lt;code&gt;", rolled back and
/// the file retried; prints "ACK &lt;file&gt; &lt;blocksetId&gt;" after each commit and "DONE".</item>
/// </list>
/// </summary>
public static class DuplicatiWriters
{
    /// <summary>Rows per table of a Duplicati file, one line (the tables a backup writes).</summary>
    public const string Counts = """SELECT (SELECT COUNT(*) FROM "Operation") || ' ' || (SELECT COUNT(*) FROM "Configuration") || ' ' || (SELECT COUNT(*) FROM "Remotevolume") || ' ' || (SELECT COUNT(*) FROM "Block") || ' ' || (SELECT COUNT(*) FROM "Blockset") || ' ' || (SELECT COUNT(*) FROM "BlocksetEntry") || ' ' || (SELECT COUNT(*) FROM "BlocklistHash") || ' ' || (SELECT COUNT(*) FROM "Metadataset") || ' ' || (SELECT COUNT(*) FROM "FileLookup") || ' ' || (SELECT COUNT(*) FROM "Fileset") || ' ' || (SELECT COUNT(*) FROM "FilesetEntry") || ' ' || (SELECT COUNT(*) FROM "IndexBlockLink") || ' ' || (SELECT COUNT(*) FROM "RemoteOperation")""";

    /// <summary>The configuration every mode and its test use: 1 KiB blocks, 64 KiB volumes.</summary>
    public static readonly DuplicatiConfiguration Configuration = new() { Blocksize = 1024, VolumeSize = 64 * 1024 };

    /// <summary>Version 0 of the source the tests and the children back up.</summary>
    public static SyntheticBackupSource Source(int seed, int files) =>
        SyntheticBackupSource.WithFiles(new SyntheticSourceOptions { Seed = seed, MaxFileBytes = 128 * 1024, FilesPerFolder = 16, CommonBlockPool = 50 }, Configuration.Blocksize, files);

    public static async Task<int> SharedAsync(string path, int seed, int files)
    {
        var version = Source(seed, files);
        for (var v = 0; v < 2; v++, version = version.Next())
        {
            await using var db = await BlockDbBackupDatabase.OpenAsync(DuplicatiConnection.Open(path), version.TimeUtc, ownsConnection: true);
            var transaction = db.Duplicati.Transaction;
            transaction.Committing = _ =>
            {
                using var command = transaction.Connection.CreateCommand();
                command.Transaction = transaction.Current;
                command.CommandText = Counts;
                Console.WriteLine("COMMITTING " + (string)command.ExecuteScalar()!);
            };
            transaction.Committed = _ => Console.WriteLine("COMMITTED");
            if (v == 0)
            {
                Console.WriteLine("READY");
            }

            await new DuplicatiBackupReplay(Configuration).BackupAsync(db, version);
        }

        Console.WriteLine("DONE");
        return 0;
    }

    public static async Task<int> DuplicatiWriterAsync(string path, int seed, int files)
    {
        var version = Source(seed, files);
        Console.WriteLine("READY");
        try
        {
            for (var v = 1; v <= 2; v++)
            {
                version = version.Next();
                await DuplicatiBackupReplay.RunBackupAsync(path, version, Configuration);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"BACKUP {v}"));
            }
        }
        catch (SqliteException e) when (e.SqliteErrorCode == 5)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"BUSY {e.SqliteExtendedErrorCode}"));
            return 3;
        }

        Console.WriteLine("DONE");
        return 0;
    }

    public static async Task<int> BesideAsync(string path, string provider, int seed)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Batching = { CommitEvery = 0 }, Pragmas = { BusyTimeout = 2000 } });
        await using var session = await db.OpenSessionAsync();
        Console.WriteLine("READY");
        long? volume = null;
        var random = new Random(seed);
        for (var file = 0; file < 40;)
        {
            try
            {
                volume ??= await session.RegisterVolumeAsync(string.Create(CultureInfo.InvariantCulture, $"duplicati-bblockdb{seed:x8}.dblock.zip"));
                var blocks = Blocks(seed, file, 1 + random.Next(70));
                foreach (var block in blocks.Concat(BlocklistBlocks.Of(blocks, Configuration.Blocksize)))
                {
                    await session.SelectXorInsertAsync(block, volume.Value);
                }

                var blockset = await session.AddBlocksetAsync(blocks.ToArray(), new SelectXorInsertResult[blocks.Count], Hash($"beside/{seed}/{file}/full", 1).Hash, volume.Value);
                await session.CommitAsync();
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"ACK {file} {blockset}"));
                file++;
            }
            catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Busy)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"BUSY {e.SqliteErrorCode}"));
                await session.RollbackAsync();
                volume = volume is { } id && await session.FindVolumeAsync(string.Create(CultureInfo.InvariantCulture, $"duplicati-bblockdb{seed:x8}.dblock.zip")) is not null ? id : null;
                await Task.Delay(random.Next(10, 100));
            }
        }

        Console.WriteLine("DONE");
        return 0;
    }

    /// <summary>The blocks of the beside-writer's file: 1 KiB each but the last (300 bytes).</summary>
    public static List<BlockKey> Blocks(int seed, int file, int count) =>
        [.. Enumerable.Range(0, count).Select(i => Hash($"beside/{seed}/{file}/{i}", i == count - 1 ? 300 : Configuration.Blocksize))];

    private static BlockKey Hash(string text, long size) =>
        new(new BlockHash(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text))), size);
}
