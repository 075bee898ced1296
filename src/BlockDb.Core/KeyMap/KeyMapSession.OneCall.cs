using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;
using BlockDb.Volumes;

namespace BlockDb.KeyMap;

// A one-call file's stored blocks, verified many to a statement.
internal readonly partial struct KeyMapSession
{
    /// <summary>
    /// A one-call file's map hits: each block's first candidate (shared map, else this transaction's own inserts) is
    /// verified against its row [M1] with <see cref="BlockDbSql.VerifiedPerRead"/> candidates to a statement, reading the
    /// row's <c>VolumeID</c> too. A block with no candidate or whose first candidate is not its row is left 0: its own
    /// lookup (further candidates, the catch-up [M2, M4], the insert [F2]) runs as before.
    /// </summary>
    void ILayoutSession.FindStoredInWrite(ReadOnlySpan<BlockKey> blocks, Span<long> ids, Span<BlockVolume> volumes)
    {
        _own.Transaction.RequireOpen();
        const int per = BlockDbSql.VerifiedPerRead;
        Span<int> positions = stackalloc int[per];
        Span<long> candidates = stackalloc long[per];
        var shared = _map.Slots;
        ulong[] own = _own.Bulk ? [] : _own.Inserts.Slots;
        var n = 0;
        for (var i = 0; i < blocks.Length; i++)
        {
            var key = KeyOf(blocks[i]);
            var candidate = FirstCandidate(shared, key);
            if (candidate == 0)
            {
                candidate = FirstCandidate(own, key);
            }

            if (candidate == 0)
            {
                continue;
            }

            (positions[n], candidates[n]) = (i, candidate);
            if (++n == per)
            {
                VerifyMany(_own.GetManyByIdWithVolume, blocks, positions, candidates, n, ids, volumes);
                n = 0;
            }
        }

        if (n > 0)
        {
            VerifyMany(_own.GetManyByIdWithVolume, blocks, positions, candidates, n, ids, volumes);
        }
    }

    /// <summary>The first candidate ID for <paramref name="key"/> in <paramref name="slots"/>, or 0 for none.</summary>
    private static long FirstCandidate(ulong[] slots, uint key)
    {
        foreach (var id in KeyTable.Candidates(slots, key))
        {
            return id;
        }

        return 0;
    }

    /// <summary>
    /// One read of <paramref name="n"/> candidates: a row comes back, with its place in this read and its volume, for
    /// each candidate whose row holds its block's hash and size [M1] (SQLite compares them with the bound ones, as
    /// <see cref="BlockDbSql.VerifyBlockId"/> does); a place past <paramref name="n"/> is bound no ID, which no row has.
    /// </summary>
    private static void VerifyMany(ISqliteStatement read, ReadOnlySpan<BlockKey> blocks, ReadOnlySpan<int> positions, ReadOnlySpan<long> candidates, int n, Span<long> ids, Span<BlockVolume> volumes)
    {
        for (var j = 0; j < BlockDbSql.VerifiedPerRead; j++)
        {
            if (j < n)
            {
                ref readonly var block = ref blocks[positions[j]];
                read.BindInt64((3 * j) + 1, candidates[j]);
                read.BindBlob((3 * j) + 2, block.HashBytes);
                read.BindInt64((3 * j) + 3, block.Size);
            }
            else
            {
                read.BindNull((3 * j) + 1);
            }
        }

        try
        {
            while (read.Step())
            {
                // Column 0 is the candidate's place in this read: a block that recurs in the file has a row per place.
                var j = (int)read.ColumnInt64(0);
                ids[positions[j]] = candidates[j];
                volumes[positions[j]] = BlockVolume.Read(read.ColumnIsNull(1) ? null : read.ColumnInt64(1));
            }
        }
        finally
        {
            read.Reset();
        }
    }
}
