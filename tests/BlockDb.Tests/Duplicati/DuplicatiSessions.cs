using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using BlockDb.Duplicati.Fixture;
using BlockDb.Duplicati.InPlace;
using BlockDb.MicrosoftData;
using BlockDb.Opening;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.Duplicati;

/// <summary>How a test reaches a Duplicati file: BlockDb on its own connection of a provider, or inside a caller's Microsoft.Data.Sqlite transaction opened as Duplicati opens it.</summary>
public sealed record DuplicatiMode(string Provider, bool Caller)
{
    /// <summary>Every SQLite provider on its own connection, and Microsoft.Data.Sqlite inside the caller's transaction.</summary>
    public static IEnumerable<object[]> All() =>
        ProviderCatalog.SqliteNames.Select(p => new object[] { new DuplicatiMode(p, false) }).Append([new DuplicatiMode(ProviderCatalog.MicrosoftData, true)]);

    public override string ToString() => Caller ? $"{Provider}/caller" : $"{Provider}/own";
}

/// <summary>
/// One BlockDb session on a Duplicati file in a <see cref="DuplicatiMode"/>. In caller mode the connection is Duplicati's
/// (its pragmas, its always-open deferred transaction); disposing the scope disposes BlockDb, then commits the caller's
/// transaction, as Duplicati does at its checkpoints.
/// </summary>
internal sealed class DuplicatiScope : IAsyncDisposable
{
    private DuplicatiScope(IBlockDatabase database, IBlockSession session, SqliteConnection? connection, DuplicatiTransaction? transaction)
    {
        Database = database;
        Session = session;
        Connection = connection;
        Transaction = transaction;
    }

    public IBlockDatabase Database { get; }

    public IBlockSession Session { get; }

    /// <summary>The caller's connection (caller mode), else null.</summary>
    public SqliteConnection? Connection { get; }

    /// <summary>The caller's transaction (caller mode), else null.</summary>
    public DuplicatiTransaction? Transaction { get; }

    /// <summary>Whether the caller's transaction is committed at dispose (else rolled back).</summary>
    public bool CommitAtDispose { get; set; } = true;

    public static async Task<DuplicatiScope> OpenAsync(string path, DuplicatiMode mode)
    {
        if (!mode.Caller)
        {
            var own = BlockDatabase.Open(new BlockDbOptions { Provider = mode.Provider, DataSource = path });
            return new DuplicatiScope(own, await own.OpenSessionAsync(), null, null);
        }

        var connection = DuplicatiConnection.Open(path);
        var transaction = new DuplicatiTransaction(connection);
        var database = new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(connection)).Build();
        return new DuplicatiScope(database, await database.OpenSessionAsync(), connection, transaction);
    }

    /// <summary>Runs SQL in the caller's transaction (caller mode only).</summary>
    public int Execute(string sql)
    {
        using var command = Connection!.CreateCommand();
        command.Transaction = Transaction!.Current;
        command.CommandText = sql;
        return command.ExecuteNonQuery();
    }

    public async ValueTask DisposeAsync()
    {
        await Session.DisposeAsync();
        await Database.DisposeAsync();
        if (Transaction is not null)
        {
            if (CommitAtDispose)
            {
                Transaction.Commit("test");
            }

            Transaction.Dispose();
            Connection!.Dispose();
        }
    }
}

/// <summary>Blocks and files for the session tests, and the two judges of a file: Duplicati's rules (the fixture's oracle) and BlockDb's CheckAsync.</summary>
internal static class DuplicatiSessions
{
    /// <summary>The template's block size (<see cref="DuplicatiFiles.SmallBlocks"/>): 1 KiB, SHA-256, so 32 hashes per blocklist.</summary>
    public const int Blocksize = 1024;

    /// <summary>A block of <paramref name="size"/> bytes whose SHA-256 hash stands for (<paramref name="tag"/>, <paramref name="index"/>).</summary>
    public static BlockKey Key(string tag, int index, long size = Blocksize) =>
        new(new BlockHash(SHA256.HashData(Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"dup-session/{tag}/{index}")))), size);

    /// <summary>A file of <paramref name="count"/> blocks, all of <see cref="Blocksize"/> bytes but the last (<paramref name="last"/> bytes).</summary>
    public static List<BlockKey> File(string tag, int count, long last = 300) =>
        [.. Enumerable.Range(0, count).Select(i => Key(tag, i, i == count - 1 ? last : Blocksize))];

    /// <summary>A file hash (SHA-256, the template's <c>filehash</c>) standing for <paramref name="tag"/>.</summary>
    public static string FullHash(string tag) => Key("file:" + tag, 1).Hash.ToString();

    /// <summary>The file's blocklist blocks, in order, as Duplicati's splitter cuts and hashes them (facts §5).</summary>
    public static List<BlockKey> Blocklists(IReadOnlyList<BlockKey> blocks) => BlocklistBlocks.Of(blocks, Blocksize);

    /// <summary>Records a file as Duplicati's backup does: its blocks, its blocklist blocks, then the blockset.</summary>
    public static async Task<long> AddFileAsync(IBlockWriter session, IReadOnlyList<BlockKey> blocks, long volume, string fullHash)
    {
        foreach (var block in blocks.Concat(Blocklists(blocks)))
        {
            await session.SelectXorInsertAsync(block, volume);
        }

        return await session.AddBlocksetAsync(blocks, fullHash);
    }

    /// <summary>Duplicati's rules (the oracle) find nothing, and BlockDb's CheckAsync on its own connection says clean.</summary>
    public static async Task AssertCleanAsync(string path)
    {
        DuplicatiFiles.AssertConsistent(path);
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = ProviderCatalog.PInvoke, DataSource = path, ReadOnly = true });
        var check = await db.CheckAsync();
        Assert.True(check.IsClean, check.ToString());
    }
}
