using BlockDb.Drivers;

namespace BlockDb.Bench.Seed;

/// <summary>The six workloads of seed 000, in its order.</summary>
internal enum SeedWorkload
{
    Insert,
    Select,
    Xor1,
    Xor2,
    Join,
    NewBlockset,
}

/// <summary>One run's input: blocks (every workload but join), blocksets (join), where a new blockset starts (new-blockset).</summary>
internal sealed record SeedInput(SeedEntry[] Entries, SeedBlockset[] Blocksets, bool[] Breaks);

/// <summary>
/// Seed 000's naive code, written from its blog post: its schema (TEXT hash, a non-unique index on (Hash, Size), a
/// BlocksetEntry without Index, Blockset.Length counting blocks) and its statements, one prepared statement each,
/// bound and stepped per block through the provider's own statement (<see cref="ISqliteStatement"/>: a prepared
/// <c>DbCommand</c> with parameters on the ADO.NET providers, <c>sqlite3_*</c> calls on PInvoke), no engine in
/// between. The seed's program also indexes <c>BlocksetEntry(BlocksetID)</c> and, redundantly, <c>Blockset(ID)</c>;
/// both are kept.
/// </summary>
internal sealed class SeedNaive : IDisposable
{
    public static readonly string[] Schema =
    [
        "CREATE TABLE Blockset (ID INTEGER PRIMARY KEY, Length INTEGER NOT NULL)",
        "CREATE TABLE BlocksetEntry (BlocksetID INTEGER NOT NULL, BlockID INTEGER NOT NULL)",
        "CREATE TABLE Block (ID INTEGER PRIMARY KEY, Hash TEXT NOT NULL, Size INTEGER NOT NULL)",
        "CREATE INDEX BlockHashSize ON Block (Hash, Size)",
        "CREATE INDEX BlocksetEntryBlocksetID ON BlocksetEntry (BlocksetID)",
        "CREATE INDEX BlocksetBlocksetID ON Blockset (ID)",
    ];

    private readonly ISqliteStatement _begin;
    private readonly ISqliteStatement _commit;
    private readonly ISqliteStatement _insertWithId;
    private readonly ISqliteStatement _select;
    private readonly ISqliteStatement _insertOrIgnore;
    private readonly ISqliteStatement _join;
    private readonly ISqliteStatement _startBlockset;
    private readonly ISqliteStatement _lastRowId;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _insertEntry;
    private readonly ISqliteStatement _grow;

    public SeedNaive(ISqliteConnection connection)
    {
        _begin = connection.Prepare(new SqlStatement("Begin", "BEGIN"));
        _commit = connection.Prepare(new SqlStatement("Commit", "COMMIT"));
        _insertWithId = connection.Prepare(new SqlStatement("Insert", "INSERT INTO Block (ID, Hash, Size) VALUES (@id, @hash, @size)", "@id", "@hash", "@size"));
        _select = connection.Prepare(new SqlStatement("Select", "SELECT ID FROM Block WHERE Hash = @hash AND Size = @size", "@hash", "@size"));
        _insertOrIgnore = connection.Prepare(new SqlStatement("Xor2Insert", "INSERT OR IGNORE INTO Block (ID, Hash, Size) VALUES (@id, @hash, @size)", "@id", "@hash", "@size"));
        _join = connection.Prepare(new SqlStatement("Join", "SELECT Block.ID, Block.Hash, Block.Size FROM Block JOIN BlocksetEntry ON BlocksetEntry.BlockID = Block.ID WHERE BlocksetEntry.BlocksetID = @blocksetid", "@blocksetid"));
        _startBlockset = connection.Prepare(new SqlStatement("StartBlockset", "INSERT INTO Blockset (Length) VALUES (0)"));
        _lastRowId = connection.Prepare(new SqlStatement("LastRowId", "SELECT last_insert_rowid()"));
        _insert = connection.Prepare(new SqlStatement("InsertBlock", "INSERT INTO Block (Hash, Size) VALUES (@hash, @size)", "@hash", "@size"));
        _insertEntry = connection.Prepare(new SqlStatement("InsertEntry", "INSERT INTO BlocksetEntry (BlocksetID, BlockID) VALUES (@blocksetid, @blockid)", "@blocksetid", "@blockid"));
        _grow = connection.Prepare(new SqlStatement("Grow", "UPDATE Blockset SET Length = Length + 1 WHERE ID = @id", "@id"));
    }

    /// <summary>Writes the pre-filled rows (IDs from 1) in one transaction.</summary>
    public static void Fill(ISqliteConnection connection, SeedData data)
    {
        foreach (var sql in Schema)
        {
            connection.Execute(sql);
        }

        using var blockset = connection.Prepare(new SqlStatement("FillBlockset", "INSERT INTO Blockset (ID, Length) VALUES (@id, @length)", "@id", "@length"));
        using var entry = connection.Prepare(new SqlStatement("FillEntry", "INSERT INTO BlocksetEntry (BlocksetID, BlockID) VALUES (@blocksetid, @blockid)", "@blocksetid", "@blockid"));
        using var block = connection.Prepare(new SqlStatement("FillBlock", "INSERT INTO Block (ID, Hash, Size) VALUES (@id, @hash, @size)", "@id", "@hash", "@size"));
        connection.Execute("BEGIN");
        var next = 0;
        foreach (var b in data.Blocksets)
        {
            blockset.BindInt64(1, b.Id);
            blockset.BindInt64(2, b.Count);
            blockset.ExecuteNonQuery();
            for (var i = 0; i < b.Count; i++, next++)
            {
                var e = data.Entries[next];
                entry.BindInt64(1, b.Id);
                entry.BindInt64(2, e.Id);
                entry.ExecuteNonQuery();
                block.BindInt64(1, e.Id);
                block.BindText(2, e.Hash);
                block.BindInt64(3, e.Size);
                block.ExecuteNonQuery();
            }
        }

        connection.Execute("COMMIT");
    }

    /// <summary>Runs one input in one transaction (BEGIN … COMMIT, as the seed); returns a digest of what it read.</summary>
    public long Run(SeedWorkload workload, SeedInput input)
    {
        _begin.ExecuteNonQuery();
        var digest = workload switch
        {
            SeedWorkload.Insert => Insert(input.Entries),
            SeedWorkload.Select => Select(input.Entries),
            SeedWorkload.Xor1 => Xor1(input.Entries),
            SeedWorkload.Xor2 => Xor2(input.Entries),
            SeedWorkload.Join => Join(input.Blocksets),
            _ => NewBlockset(input.Entries, input.Breaks),
        };
        _commit.ExecuteNonQuery();
        return digest;
    }

    public void Dispose()
    {
        foreach (var s in new[] { _begin, _commit, _insertWithId, _select, _insertOrIgnore, _join, _startBlockset, _lastRowId, _insert, _insertEntry, _grow })
        {
            s.Dispose();
        }
    }

    private long Insert(SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            _insertWithId.BindInt64(1, e.Id);
            _insertWithId.BindText(2, e.Hash);
            _insertWithId.BindInt64(3, e.Size);
            _insertWithId.ExecuteNonQuery();
            digest += e.Id;
        }

        return digest;
    }

    private long Select(SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            digest += Find(e) ?? -1;
        }

        return digest;
    }

    private long Xor1(SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            if (Find(e) is not { } id)
            {
                _insertWithId.BindInt64(1, e.Id);
                _insertWithId.BindText(2, e.Hash);
                _insertWithId.BindInt64(3, e.Size);
                _insertWithId.ExecuteNonQuery();
                id = e.Id;
            }

            digest += id;
        }

        return digest;
    }

    private long Xor2(SeedEntry[] entries)
    {
        long digest = 0;
        foreach (var e in entries)
        {
            _insertOrIgnore.BindInt64(1, e.Id);
            _insertOrIgnore.BindText(2, e.Hash);
            _insertOrIgnore.BindInt64(3, e.Size);
            _insertOrIgnore.ExecuteNonQuery();
            digest += Find(e) ?? -1;
        }

        return digest;
    }

    private long Join(SeedBlockset[] blocksets)
    {
        long digest = 0;
        foreach (var b in blocksets)
        {
            _join.BindInt64(1, b.Id);
            while (_join.Step())
            {
                digest += _join.ColumnInt64(2) + 1; // the seed reads the Size column and counts the rows
            }

            _join.Reset();
        }

        return digest;
    }

    private long NewBlockset(SeedEntry[] entries, bool[] breaks)
    {
        long digest = 0;
        var blocksetId = StartBlockset();
        for (var i = 0; i < entries.Length; i++)
        {
            var e = entries[i];
            if (Find(e) is not { } id)
            {
                _insert.BindText(1, e.Hash);
                _insert.BindInt64(2, e.Size);
                _insert.ExecuteNonQuery();
                id = LastRowId();
            }

            _insertEntry.BindInt64(1, blocksetId);
            _insertEntry.BindInt64(2, id);
            _insertEntry.ExecuteNonQuery();
            _grow.BindInt64(1, blocksetId);
            _grow.ExecuteNonQuery();
            digest += id;
            if (breaks[i])
            {
                blocksetId = StartBlockset();
            }
        }

        return digest;
    }

    private long? Find(SeedEntry e)
    {
        _select.BindText(1, e.Hash);
        _select.BindInt64(2, e.Size);
        long? id = _select.Step() ? _select.ColumnInt64(0) : null;
        _select.Reset();
        return id;
    }

    private long StartBlockset()
    {
        _startBlockset.ExecuteNonQuery();
        return LastRowId();
    }

    private long LastRowId()
    {
        _lastRowId.Step();
        var id = _lastRowId.ColumnInt64(0);
        _lastRowId.Reset();
        return id;
    }
}
