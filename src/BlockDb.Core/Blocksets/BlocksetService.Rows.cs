using BlockDb.Engine;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Blocksets;

// Writing a blockset's rows: the Blockset row and its entries, with the layout's rules around them.
internal sealed partial class BlocksetService
{
    /// <summary>
    /// The blockset's row and its entries, in whatever unit the caller holds (a one-call file's, <see cref="OneCallFile"/>;
    /// a bulk import's transaction, which is all or nothing already), after the layout's rules checked it
    /// (<see cref="IBlocksetRules.Prepare"/>): nothing here refuses. The caller counts the write.
    /// </summary>
    private long WriteRows(long[] ids, int count, long length, string? fullHash, CancellationToken cancellationToken)
    {
        var insert = _insertBlockset;
        insert.BindInt64(1, length);
        if (fullHash is null)
        {
            insert.BindNull(2);
        }
        else
        {
            insert.BindText(2, fullHash);
        }

        if (InsertBlockset() is not { } blocksetId)
        {
            // The layout's find-or-add (only a layout with rules inserts OR IGNORE): its unique (FullHash, Length)
            // holds the blockset already; nothing was written.
            return (_rules is null ? null : Find(fullHash!, length))
                ?? throw new InvalidOperationException($"The blockset insert wrote no row and no blockset has its full hash {fullHash} and length {length}.");
        }

        var i = 0;
        if (count >= BlockDbSql.EntriesPerInsert)
        {
            // Whole groups of entries in one statement each (prepared on first use): one step instead of sixteen.
            var entries = _insertEntries ??= _connection.Prepare(BlockDbSql.InsertBlocksetEntries);
            entries.BindInt64(1, blocksetId);
            for (; i + BlockDbSql.EntriesPerInsert <= count; i += BlockDbSql.EntriesPerInsert)
            {
                entries.BindInt64(2, i);
                for (var j = 0; j < BlockDbSql.EntriesPerInsert; j++)
                {
                    Require.NotCancelled(i + j + 1, cancellationToken);
                    entries.BindInt64(3 + j, ids[i + j]);
                }

                entries.ExecuteNonQuery();
            }
        }

        var entry = _insertEntry;
        entry.BindInt64(1, blocksetId);
        for (; i < count; i++)
        {
            Require.NotCancelled(i + 1, cancellationToken);
            entry.BindInt64(2, i);
            entry.BindInt64(3, ids[i]);
            entry.ExecuteNonQuery();
        }

        _rules?.Written(blocksetId);
        return blocksetId;
    }

    /// <summary>Runs the bound blockset insert: the new ID, or null when it wrote no row (the layout's find-or-add found the blockset).</summary>
    private long? InsertBlockset() => _insertBlockset.ExecuteNonQuery() == 0 ? null : _connection.LastInsertRowId;
}
