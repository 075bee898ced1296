using BlockDb.Drivers;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Support;

/// <summary>
/// Tests on KeyMap files in a temp folder with a foreign writer beside BlockDb: plain SQL (<see cref="RawSql"/>, or a
/// raw PInvoke connection) plays another application or a hostile one, and figures measured on the way go to the test
/// output. Each test states the claim it checks; a failing test is a finding. Shared by the key map guard, coverage
/// and limit tests and the batch, disposal and open tests that began as issue 10's defects and two adversarial reviews.
/// </summary>
public abstract class KeyMapFileTestBase(ITestOutputHelper output) : IDisposable
{
    /// <summary>How long a call or a dispose may take before the test calls it hung.</summary>
    protected static readonly TimeSpan Hang = TimeSpan.FromSeconds(15);

    /// <summary>Counts the (Hash, Size) pairs that have more than one row.</summary>
    protected const string DuplicatesSql = """SELECT COUNT(*) FROM (SELECT 1 FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1)""";

    protected TempFolder Folder { get; } = new();

    protected ITestOutputHelper Output => output;

    public void Dispose()
    {
        Folder.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Opens <paramref name="name"/> in the temp folder (or a full path) as a KeyMap file, through PInvoke unless told otherwise.</summary>
    protected IBlockDatabase Open(string name, Action<BlockDbOptions>? configure = null, string provider = "PInvoke")
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = Folder.File(name), Index = { Layout = BlockLayout.KeyMap } };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    /// <summary>Opens the file at <paramref name="path"/> through <paramref name="provider"/> with its recorded layout (KeyMap for a new file).</summary>
    protected static IBlockDatabase OpenWith(string path, string provider, Action<BlockDbOptions>? configure = null)
    {
        var options = new BlockDbOptions { Provider = provider, DataSource = path };
        configure?.Invoke(options);
        return BlockDatabase.Open(options);
    }

    /// <summary>Runs a statement meant to tamper with the guards; the file refusing it (SQLITE_CONSTRAINT) is the right outcome, and the attack then goes on without it.</summary>
    private protected static bool Tamper(RawSql raw, string sql)
    {
        try
        {
            raw.Execute(sql);
            return false;
        }
        catch (BlockDbException e) when (e.SqliteErrorCode == SqliteResultCode.Constraint)
        {
            return true;
        }
    }

    private protected static (long MaxBlockId, long Generation) State(RawSql raw) =>
        (raw.Scalar("""SELECT "MaxBlockId" FROM "BlockDbState" """), raw.Scalar("""SELECT "Generation" FROM "BlockDbState" """));

    /// <summary>Every row and the state row, for an assertion's message.</summary>
    private protected static string Dump(RawSql raw) =>
        string.Join(", ", raw.Blocks().Select(b => $"{b.Id}:{b.Hash[..6]}/{b.Size}"))
        + $" state=({raw.Text("""SELECT "MaxBlockId" || ', ' || "Generation" FROM "BlockDbState" """)})";

    /// <summary>A base64 hash as an SQL BLOB literal.</summary>
    protected static string HexOf(string base64) => "X'" + Convert.ToHexString(Convert.FromBase64String(base64)) + "'";

    /// <summary>Inserts Hash(first..first+count-1) at size 10 through BlockDb, committed, and returns their IDs.</summary>
    protected static async Task<long[]> SeedAsync(IBlockSession session, int count, int first = 0)
    {
        var ids = new long[count];
        for (var i = 0; i < count; i++)
        {
            ids[i] = (await session.SelectXorInsertAsync(TestData.Block(first + i, 10))).Id;
        }

        await session.CommitAsync();
        return ids;
    }

    /// <summary>A KeyMap file (PInvoke) with blocks 1..<paramref name="count"/> at IDs 1..count, committed and closed.</summary>
    protected static async Task CreateBlocksAsync(string path, int count)
    {
        await using var db = OpenWith(path, "PInvoke", o => o.Index.Layout = BlockLayout.KeyMap);
        await using var session = await db.OpenSessionAsync();
        for (var i = 1; i <= count; i++)
        {
            Assert.Equal(i, (await session.SelectXorInsertAsync(TestData.Block(i, 10))).Id);
        }

        await session.CommitAsync();
    }

    protected static ISqliteConnection RawOpen(string path) =>
        ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite));

    protected static string? RawQuery(string path, string sql)
    {
        using var raw = RawOpen(path);
        return raw.QueryText(sql);
    }

    /// <summary>A KeyMap-layout row written with plain SQL: the hash as its decoded bytes; <paramref name="id"/> null lets SQLite choose.</summary>
    protected static void RawInsert(ISqliteConnection raw, long? id, string hash, long size)
    {
        using var insert = raw.Prepare(id is null
            ? new SqlStatement("RawInsert", """INSERT INTO "Block" ("Hash", "Size") VALUES (@H, @S)""", "@H", "@S")
            : new SqlStatement("RawInsertAt", """INSERT INTO "Block" ("ID", "Hash", "Size") VALUES (@I, @H, @S)""", "@I", "@H", "@S"));
        var i = 1;
        if (id is { } value)
        {
            insert.BindInt64(i++, value);
        }

        insert.BindBlob(i++, Convert.FromBase64String(hash));
        insert.BindInt64(i, size);
        insert.ExecuteNonQuery();
    }

    /// <summary>Writes a row at <paramref name="id"/>; false (logged) when the file refuses it, which the tests accept as correct.</summary>
    protected bool TryRawInsert(string path, long id, string hash, long size)
    {
        try
        {
            using var raw = RawOpen(path);
            RawInsert(raw, id, hash, size);
            return true;
        }
        catch (BlockDbException e)
        {
            Output.WriteLine($"The file refused a row at ID {id}: {e.Message}");
            return false;
        }
    }

    protected static async Task<(T? Value, Exception? Error)> OutcomeAsync<T>(Func<ValueTask<T>> call)
    {
        try
        {
            return (await call(), null);
        }
        catch (Exception e)
        {
            return (default, e);
        }
    }

    protected static (T? Value, Exception? Error) Outcome<T>(Func<T> call)
    {
        try
        {
            return (call(), null);
        }
        catch (Exception e)
        {
            return (default, e);
        }
    }

    protected static string Describe(object? value, Exception? error) =>
        error is null ? $"returned {value ?? "null"}" : $"{error.GetType().Name}: {error.Message}";
}
