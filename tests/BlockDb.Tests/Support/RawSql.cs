using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.Support;

/// <summary>A plain SQL connection to a BlockDb file, for tests that play a writer outside BlockDb or read the file directly.</summary>
internal sealed class RawSql(string path, string provider = "PInvoke", SqliteOpenMode mode = SqliteOpenMode.ReadWrite, int busyTimeoutMilliseconds = 5000) : IDisposable
{
    private readonly ISqliteConnection _connection = ProviderCatalog.SqliteDriver(provider).Open(new SqliteOpenOptions(path, mode, busyTimeoutMilliseconds));

    public void Execute(string sql) => _connection.Execute(sql);

    public long Scalar(string sql) => long.Parse(_connection.QueryText(sql) ?? "0", CultureInfo.InvariantCulture);

    public string? Text(string sql) => _connection.QueryText(sql);

    /// <summary>Inserts a block row as a foreign writer would; <paramref name="id"/> null lets SQLite pick the rowid. Hashes are stored as the file's layout stores them.</summary>
    public long InsertBlock(string hash, long size, long? id = null, bool blob = true)
    {
        var sql = id is null
            ? """INSERT INTO "Block" ("Hash", "Size") VALUES (@Hash, @Size)"""
            : """INSERT INTO "Block" ("ID", "Hash", "Size") VALUES (@ID, @Hash, @Size)""";
        using var insert = _connection.Prepare(id is null ? new SqlStatement("RawInsert", sql, "@Hash", "@Size") : new SqlStatement("RawInsertId", sql, "@ID", "@Hash", "@Size"));
        var index = 1;
        if (id is { } explicitId)
        {
            insert.BindInt64(index++, explicitId);
        }

        if (blob)
        {
            insert.BindBlob(index++, Convert.FromBase64String(hash));
        }
        else
        {
            insert.BindText(index++, hash);
        }

        insert.BindInt64(index, size);
        insert.ExecuteNonQuery();
        return Scalar("SELECT last_insert_rowid()");
    }

    /// <summary>How many (Hash, Size) pairs have more than one row.</summary>
    public long DuplicateGroups() => Scalar("""SELECT COUNT(*) FROM (SELECT 1 FROM "Block" GROUP BY "Hash", "Size" HAVING COUNT(*) > 1)""");

    /// <summary>Every block row as (ID, base64 hash, size), whichever way the layout stores the hash.</summary>
    public List<(long Id, string Hash, long Size)> Blocks()
    {
        using var all = _connection.Prepare(new SqlStatement("RawBlocks", """SELECT "ID", "Hash", "Size", typeof("Hash") FROM "Block" ORDER BY "ID" """));
        var rows = new List<(long, string, long)>();
        Span<byte> buffer = stackalloc byte[128];
        while (all.Step())
        {
            var hash = all.ColumnText(3) == "text" ? all.ColumnText(1)! : Convert.ToBase64String(buffer[..all.ColumnBlob(1, buffer)]);
            rows.Add((all.ColumnInt64(0), hash, all.ColumnInt64(2)));
        }

        all.Reset();
        return rows;
    }

    public void Dispose() => _connection.Dispose();
}
