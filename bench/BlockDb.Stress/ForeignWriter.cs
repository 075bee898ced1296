using System.Diagnostics;
using System.Globalization;
using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Stress;

/// <summary>
/// A writer that is not BlockDb: plain SQL on its own connection, as another tool of a backup engine might run. In
/// its own write transactions it inserts pool blocks that are absent (letting SQLite pick the ID, into a gap below
/// the highest ID, or above it), deletes, updates and replaces rows it inserted that no blockset uses, and never
/// makes a duplicate itself; a second connection holds read transactions for a while. It prints <c>FOREIGN id</c> for every ID it wrote, so the orchestrator does not hold
/// BlockDb to IDs that SQL outside it changed.
/// </summary>
internal sealed class ForeignWriter(string path, TimeSpan duration, int seed)
{
    private readonly Random _random = new(seed);
    private readonly List<long> _own = [];
    private readonly Dictionary<string, long> _stats = [];

    public int Run()
    {
        var reader = new Thread(() => LongReads(path, duration, seed)) { IsBackground = true };
        reader.Start();
        using var connection = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWrite, 1000));
        connection.Execute("PRAGMA busy_timeout = 1000");
        using var find = connection.Prepare(new SqlStatement("Find", """SELECT "ID" FROM "Block" WHERE "Hash" = @Hash AND "Size" = @Size""", "@Hash", "@Size"));
        using var exists = connection.Prepare(new SqlStatement("Exists", """SELECT 1 FROM "Block" WHERE "ID" = @ID""", "@ID"));
        using var used = connection.Prepare(new SqlStatement("Used", """SELECT 1 FROM "BlocksetEntry" WHERE "BlockID" = @ID LIMIT 1""", "@ID"));
        using var insertAuto = connection.Prepare(new SqlStatement("InsertAuto", """INSERT INTO "Block" ("Hash", "Size") VALUES (@Hash, @Size)""", "@Hash", "@Size"));
        using var insertAt = connection.Prepare(new SqlStatement("InsertAt", """INSERT INTO "Block" ("ID", "Hash", "Size") VALUES (@ID, @Hash, @Size)""", "@ID", "@Hash", "@Size"));
        using var replaceAt = connection.Prepare(new SqlStatement("ReplaceAt", """INSERT OR REPLACE INTO "Block" ("ID", "Hash", "Size") VALUES (@ID, @Hash, @Size)""", "@ID", "@Hash", "@Size"));
        using var update = connection.Prepare(new SqlStatement("Update", """UPDATE "Block" SET "Hash" = @Hash, "Size" = @Size WHERE "ID" = @ID""", "@Hash", "@Size", "@ID"));
        using var delete = connection.Prepare(new SqlStatement("Delete", """DELETE FROM "Block" WHERE "ID" = @ID""", "@ID"));
        var deadline = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < deadline)
        {
            var written = new List<long>();
            try
            {
                connection.Execute("BEGIN IMMEDIATE");
                var key = StressKeys.Foreign(_random);
                var absent = !Step(find, s => { s.BindBlob(1, key.Hash.Bytes); s.BindInt64(2, key.Size); });
                var op = _random.Next(6);
                if (op <= 2 && absent)
                {
                    var max = long.Parse(connection.QueryText("""SELECT COALESCE(MAX("ID"), 0) FROM "Block" """) ?? "0", CultureInfo.InvariantCulture);
                    var id = op switch
                    {
                        0 => FreeIdBelow(max, exists),
                        1 => max + 1 + _random.Next(5),
                        _ => (long?)null,
                    };
                    if (id is { } at)
                    {
                        Run(insertAt, s => { s.BindInt64(1, at); s.BindBlob(2, key.Hash.Bytes); s.BindInt64(3, key.Size); });
                        written.Add(at);
                        Count(op == 0 ? "insert-gap" : "insert-high");
                    }
                    else
                    {
                        Run(insertAuto, s => { s.BindBlob(1, key.Hash.Bytes); s.BindInt64(2, key.Size); });
                        written.Add(long.Parse(connection.QueryText("SELECT last_insert_rowid()")!, CultureInfo.InvariantCulture));
                        Count("insert-auto");
                    }
                }
                else if (op >= 3 && _own.Count > 0 && UnusedOwn(used, exists) is { } mine)
                {
                    switch (op)
                    {
                        case 3:
                            Run(delete, s => s.BindInt64(1, mine));
                            _own.Remove(mine);
                            Count("delete");
                            break;
                        case 4 when absent:
                            Run(update, s => { s.BindBlob(1, key.Hash.Bytes); s.BindInt64(2, key.Size); s.BindInt64(3, mine); });
                            written.Add(mine);
                            Count("update");
                            break;
                        case 5 when absent:
                            Run(replaceAt, s => { s.BindInt64(1, mine); s.BindBlob(2, key.Hash.Bytes); s.BindInt64(3, key.Size); });
                            written.Add(mine);
                            Count("replace");
                            break;
                    }
                }

                connection.Execute("COMMIT");
                foreach (var id in written)
                {
                    if (!_own.Contains(id))
                    {
                        _own.Add(id);
                    }

                    Output.Line(string.Create(CultureInfo.InvariantCulture, $"FOREIGN {id} @{DateTime.UtcNow.Ticks}"));
                }
            }
            catch (BlockDbException e)
            {
                Count(e.IsTransient ? "busy" : "error");
                if (!e.IsTransient)
                {
                    Output.Line($"ERROR foreign @{DateTime.UtcNow.Ticks}: {e.Message.Replace('\n', ' ')}");
                }

                if (connection.InTransaction)
                {
                    connection.Execute("ROLLBACK");
                }
            }

            Thread.Sleep(_random.Next(3));
        }

        reader.Join();
        lock (_stats)
        {
            Output.Line("STAT " + string.Join(' ', _stats.Select(s => $"foreign-{s.Key}={s.Value}")));
        }

        return 0;
    }

    /// <summary>Holds read transactions of 50 to 200 ms: in DELETE journal mode they keep writers from committing beyond their busy timeout.</summary>
    private void LongReads(string path, TimeSpan duration, int seed)
    {
        var random = new Random(seed + 1);
        using var connection = ProviderCatalog.SqliteDriver("PInvoke").Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadOnly, 1000));
        connection.Execute("PRAGMA busy_timeout = 1000");
        var deadline = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < deadline)
        {
            try
            {
                connection.Execute("BEGIN DEFERRED");
                connection.QueryText("""SELECT COUNT(*) FROM "Block" """);
                Thread.Sleep(50 + random.Next(150));
                connection.Execute("COMMIT");
                Count("long-reads");
            }
            catch (BlockDbException)
            {
                Count("long-read-busy");
                if (connection.InTransaction)
                {
                    connection.Execute("ROLLBACK");
                }
            }

            Thread.Sleep(random.Next(100));
        }
    }

    /// <summary>A free ID below the highest one (a gap a deleted or skipped row left), or null when none is found quickly.</summary>
    private long? FreeIdBelow(long max, ISqliteStatement exists)
    {
        for (var attempt = 0; attempt < 8 && max > 1; attempt++)
        {
            var candidate = 1 + _random.NextInt64(max - 1);
            if (!Step(exists, s => s.BindInt64(1, candidate)))
            {
                return candidate;
            }
        }

        return null;
    }

    private long? UnusedOwn(ISqliteStatement used, ISqliteStatement exists)
    {
        var mine = _own[_random.Next(_own.Count)];
        return Step(exists, s => s.BindInt64(1, mine)) && !Step(used, s => s.BindInt64(1, mine)) ? mine : null;
    }

    private static bool Step(ISqliteStatement statement, Action<ISqliteStatement> bind)
    {
        bind(statement);
        try
        {
            return statement.Step();
        }
        finally
        {
            statement.Reset();
        }
    }

    private static void Run(ISqliteStatement statement, Action<ISqliteStatement> bind)
    {
        bind(statement);
        statement.ExecuteNonQuery();
    }

    private void Count(string what)
    {
        lock (_stats)
        {
            _stats[what] = _stats.GetValueOrDefault(what) + 1;
        }
    }
}
