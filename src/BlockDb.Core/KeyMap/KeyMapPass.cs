using System.Buffers;
using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb.KeyMap;

/// <summary>
/// One catch-up read of the file for a <see cref="BlockKeyMap"/>: the state row, the schema version and the rows above
/// the map's watermark (or every row), all from one statement and so from one snapshot, added to the map in chunks.
/// </summary>
/// <param name="Full">Whether the whole table was read.</param>
/// <param name="MaxBlockId">The snapshot's <c>BlockDbState.MaxBlockId</c>.</param>
/// <param name="Version">The snapshot's generation and schema version.</param>
/// <param name="LastId">The highest block ID read (0 when none).</param>
internal readonly record struct KeyMapPass(bool Full, long MaxBlockId, MapVersion Version, long LastId)
{
    private const int ChunkRows = 4096;

    /// <summary>The incremental pass: null when the snapshot is at a newer version than the map (then the whole table must be read).</summary>
    public static KeyMapPass? ReadAbove(BlockKeyMap map, ISqliteStatement catchUp, long after, MapVersion version)
    {
        catchUp.BindInt64(1, after);
        try
        {
            var (maxBlockId, snapshot) = ReadState(catchUp);
            return snapshot.IsNewerThan(version) ? null : new KeyMapPass(false, maxBlockId, snapshot, ReadRows(map, catchUp));
        }
        finally
        {
            catchUp.Reset();
        }
    }

    /// <summary>The whole table, in one snapshot; fails the map when the guards changed.</summary>
    public static KeyMapPass ReadAll(BlockKeyMap map, KeyMapQueries statements)
    {
        var catchUp = statements.CatchUp;

        // From the lowest possible ID, so rows at 0 or below (which the guards refuse, but older files may hold) are seen.
        catchUp.BindInt64(1, long.MinValue);
        try
        {
            var (maxBlockId, snapshot) = ReadState(catchUp);
            if (KeyMapTriggers.Read(statements.TriggerRows) is { Intact: false } triggers)
            {
                throw map.Fail(memoryLimit: false, triggers.Problem(path: null));
            }

            map.Presize(CountBlocks(statements.CountBlocks)); // sized once; each chunk is checked as it comes

            return new KeyMapPass(true, maxBlockId, snapshot, ReadRows(map, catchUp));
        }
        finally
        {
            catchUp.Reset();
        }
    }

    /// <summary>Steps to the first row and reads the state every row carries.</summary>
    private static (long MaxBlockId, MapVersion Version) ReadState(ISqliteStatement catchUp) =>
        catchUp.Step()
            ? (catchUp.ColumnInt64(0), new MapVersion(catchUp.ColumnInt64(1), catchUp.ColumnInt64(2)))
            : throw new BlockDbFormatException("The KeyMap file has no BlockDbState row (its guards were removed by SQL outside BlockDb); reopen it for writing to restore them.");

    private static long CountBlocks(ISqliteStatement count)
    {
        try
        {
            return count.Step() ? count.ColumnInt64(0) : 0;
        }
        finally
        {
            count.Reset();
        }
    }

    /// <summary>Adds the current row and the rest in chunks; returns the highest block ID read (0 when none).</summary>
    private static long ReadRows(BlockKeyMap map, ISqliteStatement catchUp)
    {
        Span<byte> hash = stackalloc byte[BlockHash.MaxBytes];
        var chunk = ArrayPool<ulong>.Shared.Rent(ChunkRows);
        var hasher = map.Hasher;
        try
        {
            var filled = 0;
            long last = 0;
            do
            {
                var length = catchUp.ColumnBlob(4, hash);
                if (length == -1)
                {
                    break; // the one row of a pass with no block above the watermark
                }

                var id = catchUp.ColumnInt64(3);
                if (id is < 1 or > KeyMapLayout.MaxId)
                {
                    throw map.Fail(memoryLimit: false, string.Create(CultureInfo.InvariantCulture,
                        $"Block row {id} has an ID the KeyMap layout cannot hold (1 to {KeyMapLayout.MaxId}): BlockDb could not find that block and would store it again. It was written outside BlockDb; run RepairAsync (blockdb-backup repair) to renumber such rows, or CheckAsync to list them."));
                }

                last = id;
                if (length is < 1 or > BlockHash.MaxBytes)
                {
                    continue; // no lookup can ask for this hash; CheckAsync reports the row
                }

                chunk[filled++] = KeyTable.SlotOf(hasher.KeyOf(hash[..length], catchUp.ColumnInt64(5)), id);
                if (filled == ChunkRows)
                {
                    map.AddChunk(chunk, filled);
                    filled = 0;
                }
            }
            while (catchUp.Step());

            map.AddChunk(chunk, filled);
            return last;
        }
        finally
        {
            ArrayPool<ulong>.Shared.Return(chunk);
        }
    }

}
