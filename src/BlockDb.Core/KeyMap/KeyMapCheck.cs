using BlockDb.Drivers;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.KeyMap;

/// <summary>The check's KeyMap part: every block looked up in the database's key map.</summary>
internal static class KeyMapCheck
{
    /// <summary>Catches the map up in this snapshot, then looks every block up in it (exact entry, no verification read needed).</summary>
    public static BlockDbFinding Run(ISqliteConnection connection, BlockKeyMap map, CancellationToken cancellationToken)
    {
        try
        {
            // A snapshot older than the map's (a flagged write committed since the check began) says nothing about it.
            if (map.CatchUp(new KeyMapQueries(connection), cancellationToken).Version != map.Version)
            {
                return BlockDbFinding.None;
            }
        }
        catch (BlockDbException)
        {
            // The map cannot load (an ID it cannot hold, its memory limit, changed guards): the blocks it lacks are counted below.
        }

        Span<byte> hash = stackalloc byte[BlockHash.MaxBytes];
        var first = new List<long>();
        long missing = 0;
        using var all = connection.Prepare(BlockDbSql.CheckAllBlocks);
        try
        {
            for (var row = 0L; all.Step(); row++)
            {
                if ((row & 0xFFFF) == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                var id = all.ColumnInt64(0);
                var length = all.ColumnBlob(1, hash);
                // Rows with a hash no lookup can ask for are the unusable-hash finding, not the map's.
                var lookable = length is >= 1 and <= BlockHash.MaxBytes;
                if (lookable && !(id is >= 1 and <= KeyMapLayout.MaxId && map.Holds(map.Hasher.KeyOf(hash[..length], all.ColumnInt64(2)), id)))
                {
                    missing++;
                    SqliteCheck.Keep(first, id);
                }
            }
        }
        finally
        {
            all.Reset();
        }

        first.Sort();
        return new BlockDbFinding(missing, first);
    }
}
