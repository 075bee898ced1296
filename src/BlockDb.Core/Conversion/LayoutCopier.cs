using BlockDb.Blocksets;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;

namespace BlockDb.Conversion;

/// <summary>
/// Copies every row of one BlockDb file into a new, empty one of another layout: volumes, blocks, blocksets and entries,
/// each at its own ID, in transactions of <see cref="ConversionOptions.RowsPerTransaction"/> rows, from one read
/// snapshot of the source. Hashes are converted between text and bytes as the layouts store them. Then it carries what
/// BlockDb does not own (<see cref="ForeignSchema"/>), read through the same source connection: so from the same
/// snapshot as BlockDb's rows (an engine row naming a blockset names one that was copied), in the same transactions,
/// cancelled the same way. (Attaching the source to the target connection would copy in one statement per table, but
/// in a read transaction of its own, which sees what a writer committed since the source's snapshot began.)
/// </summary>
internal sealed class LayoutCopier(ISqliteConnection source, LayoutState from, ISqliteConnection target, LayoutState to, ConversionOptions options, IProgress<ConversionProgress>? progress, CancellationToken cancellationToken)
{
    private long _inTransaction;

    // The value of a carried TEXT or BLOB column, on its way from the source row to the insert (grown as needed).
    private byte[] _buffer = new byte[256];

    /// <summary>The rows copied per table, the duplicates merged, and the objects of another application carried (names, in creation order, and their tables' rows).</summary>
    /// <exception cref="BlockDbConflictException">Duplicates without merging, a block ID the target cannot hold, or an object that cannot be carried unchanged; nothing was written.</exception>
    public (long Volumes, long Blocks, long Merged, long Blocksets, long Entries, IReadOnlyList<string> Carried, long CarriedRows) Copy()
    {
        source.Execute(BlockDbSql.BeginRead);
        try
        {
            var totals = Totals();
            var merge = Duplicates();
            var foreign = ForeignSchema.Read(source, from.Definition, target, to.Definition);

            // The carried tables' rows go in table by table: a foreign key is not checked against a table not copied yet
            // (the target connection is the conversion's own, and BlockDb's tables have no foreign keys).
            target.Execute("PRAGMA foreign_keys = OFF");
            target.Execute(BlockDbSql.Begin.Text);
            var volumes = CopyTable("Remotevolume", BlockDbSql.CopyVolumesOut, BlockDbSql.CopyVolumeIn, totals[0], CopyVolume);
            long highest = 0;
            var blocks = CopyTable("Block", BlockDbSql.CopyBlocksOut, BlockDbSql.CopyBlockIn, totals[1], (row, insert) =>
            {
                var id = row.ColumnInt64(0);
                if (merge.ContainsKey(id))
                {
                    return false;
                }

                CopyBlock(id, row, insert);
                highest = Math.Max(highest, id);
                return true;
            });
            var blocksets = CopyTable("Blockset", BlockDbSql.CopyBlocksetsOut, BlockDbSql.CopyBlocksetIn, totals[2], CopyBlockset);
            var entries = CopyTable("BlocksetEntry", BlockDbSql.CopyEntriesOut, BlockDbSql.InsertBlocksetEntry, totals[3], (row, insert) =>
            {
                var blockId = row.ColumnInt64(2);
                insert.BindInt64(1, row.ColumnInt64(0));
                insert.BindInt64(2, row.ColumnInt64(1));
                insert.BindInt64(3, merge.TryGetValue(blockId, out var keep) ? keep : blockId);
                insert.ExecuteNonQuery();
                return true;
            });
            var (carried, carriedRows) = Carry(foreign);

            // The deleted-ID high-water marks come along, so an ID another session or process still holds from the
            // source names nothing in the new file either (blockset IDs are copied as they are; a KeyMap target seals
            // the block mark in its own state too).
            var blockMark = Floor(BlockDbSql.BlockIdFloor);
            IdFloor.RaiseOnce(target, BlockDbSql.BlockIdFloor, blockMark);
            IdFloor.RaiseOnce(target, BlockDbSql.BlocksetIdFloor, Floor(BlockDbSql.BlocksetIdFloor));
            to.SealIds(target, Math.Max(highest, blockMark));
            target.Execute(BlockDbSql.Commit.Text);
            return (volumes, blocks, merge.Count, blocksets, entries, carried, carriedRows);
        }
        finally
        {
            if (target.InTransaction)
            {
                target.Execute(BlockDbSql.Rollback.Text);
            }

            source.Execute(BlockDbSql.Rollback.Text);
        }
    }

    /// <summary>
    /// Creates each table of another application with its own SQL and copies its rows at their rowids with their
    /// <c>AUTOINCREMENT</c> counter, then creates the indexes, views and triggers (after every row, so no trigger fires
    /// on the copy, and after BlockDb's rows, which a trigger on a BlockDb table would otherwise see).
    /// </summary>
    private (IReadOnlyList<string> Names, long Rows) Carry(ForeignSchema foreign)
    {
        var names = new List<string>();
        long rows = 0;
        foreach (var table in foreign.Tables)
        {
            target.Execute(table.Sql);
            names.Add(table.Name);
            long total;
            using (var count = source.Prepare(table.Count))
            {
                total = count.Step() ? count.ColumnInt64(0) : 0;
            }

            rows += CopyTable(table.Name, table.Select, table.Insert, total, (row, insert) => table.CopyRow(row, insert, ref _buffer));
            if (table.Sequence is { } sequence)
            {
                using var update = target.Prepare(BlockDbSql.CarrySequenceUpdate);
                update.BindInt64(1, sequence);
                update.BindText(2, table.Name);
                if (update.ExecuteNonQuery() == 0)
                {
                    using var insert = target.Prepare(BlockDbSql.CarrySequenceInsert);
                    insert.BindText(1, table.Name);
                    insert.BindInt64(2, sequence);
                    insert.ExecuteNonQuery();
                }
            }
        }

        foreach (var (name, sql) in foreign.Others)
        {
            target.Execute(sql);
            names.Add(name);
        }

        return (names, rows);
    }

    /// <summary>The source's floor of <paramref name="floor"/>'s table, 0 when it has none.</summary>
    private long Floor(BlockDbSql.IdFloorSql floor)
    {
        using var read = source.Prepare(BlockDbSql.ReadSetting);
        read.BindText(1, floor.Setting);
        return read.Step() && long.TryParse(read.ColumnText(0), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var mark) ? mark : 0;
    }

    private long[] Totals()
    {
        using var totals = source.Prepare(BlockDbSql.CopyTotals);
        totals.Step();
        return [totals.ColumnInt64(0), totals.ColumnInt64(1), totals.ColumnInt64(2), totals.ColumnInt64(3)];
    }

    /// <summary>Each duplicate block ID with the lowest ID of its group, when merging; else none, or the refusal.</summary>
    private Dictionary<long, long> Duplicates()
    {
        var merge = new Dictionary<long, long>();
        using var rows = source.Prepare(BlockDbSql.CheckDuplicateRows);
        while (rows.Step())
        {
            merge[rows.ColumnInt64(0)] = rows.ColumnInt64(1);
        }

        if (merge.Count > 0 && !options.MergeDuplicates)
        {
            throw new BlockDbConflictException(
                $"The source holds {merge.Count} duplicate block rows (the first: ID {merge.Keys.Min()}); a conversion copies an index without duplicates. Run RepairAsync on the source, or convert with MergeDuplicates = true. Nothing was written.");
        }

        return merge;
    }

    /// <summary>Copies one table row by row; <paramref name="copy"/> binds and runs the insert, or skips the row (false).</summary>
    private long CopyTable(string table, SqlStatement select, SqlStatement insertText, long total, Func<ISqliteStatement, ISqliteStatement, bool> copy)
    {
        using var rows = source.Prepare(select);
        using var insert = target.Prepare(insertText);
        long copied = 0;
        long seen = 0;
        while (rows.Step())
        {
            if (copy(rows, insert))
            {
                copied++;
            }

            if (++seen % 4096 == 0)
            {
                cancellationToken.ThrowIfCancellationRequested();
            }

            if (++_inTransaction >= options.RowsPerTransaction)
            {
                target.Execute(BlockDbSql.Commit.Text);
                target.Execute(BlockDbSql.Begin.Text);
                _inTransaction = 0;
                progress?.Report(new ConversionProgress(table, seen, total));
            }
        }

        progress?.Report(new ConversionProgress(table, seen, total));
        return copied;
    }

    private static bool CopyVolume(ISqliteStatement row, ISqliteStatement insert)
    {
        insert.BindInt64(1, row.ColumnInt64(0));
        insert.BindText(2, row.ColumnText(1) ?? string.Empty);
        insert.BindText(3, row.ColumnText(2) ?? string.Empty);
        BindOptional(insert, 4, row, 3);
        insert.ExecuteNonQuery();
        return true;
    }

    private static bool CopyBlockset(ISqliteStatement row, ISqliteStatement insert)
    {
        insert.BindInt64(1, row.ColumnInt64(0));
        insert.BindInt64(2, row.ColumnInt64(1));
        if (row.ColumnText(2) is { } fullHash)
        {
            insert.BindText(3, fullHash);
        }
        else
        {
            insert.BindNull(3);
        }

        insert.ExecuteNonQuery();
        return true;
    }

    private static void BindOptional(ISqliteStatement insert, int index, ISqliteStatement row, int column)
    {
        if (row.ColumnIsNull(column))
        {
            insert.BindNull(index);
        }
        else
        {
            insert.BindInt64(index, row.ColumnInt64(column));
        }
    }

    private void CopyBlock(long id, ISqliteStatement row, ISqliteStatement insert)
    {
        if (id < 1 || id > to.Definition.MaxBlockId)
        {
            throw new BlockDbConflictException($"Block {id} has an ID the {to.Definition.Layout} layout cannot hold (1 to {to.Definition.MaxBlockId}); run RepairAsync on the source to renumber it. Nothing was written.");
        }

        string hash;
        try
        {
            hash = from.Definition.ReadHash(row, 1);
        }
        catch (BlockDbFormatException e)
        {
            throw new BlockDbConflictException($"Block {id} of the source has a hash no layout can store ({e.Message}); CheckAsync lists such rows. Nothing was written.");
        }

        insert.BindInt64(1, id);
        if (to.Definition.TextHashes)
        {
            insert.BindText(2, hash);
        }
        else
        {
            Span<byte> bytes = stackalloc byte[BlockHash.MaxBytes];
            insert.BindBlob(2, bytes[..BlockHash.Decode(hash, bytes)]);
        }

        insert.BindInt64(3, row.ColumnInt64(2));
        BindOptional(insert, 4, row, 3);
        insert.ExecuteNonQuery();
    }
}
