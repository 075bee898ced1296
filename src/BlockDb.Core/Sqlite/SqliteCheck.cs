using System.Globalization;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;


namespace BlockDb.Sqlite;

/// <summary><see cref="IBlockDatabase.CheckAsync"/> and <see cref="IBlockDatabase.RepairAsync"/>, on a connection of their own.</summary>
internal static class SqliteCheck
{
    /// <summary>Runs every check in one read transaction (one snapshot), beside running writers; on a caller's connection, inside the caller's transaction (it sees the caller's uncommitted rows) [X1].</summary>
    public static BlockDbCheckResult Check(ISqliteConnection connection, LayoutState layout, CancellationToken cancellationToken, bool inCallerTransaction = false)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return inCallerTransaction ? CheckInSnapshot(connection, layout, cancellationToken) : Transactions.Run(connection, BlockDbSql.BeginRead, () => CheckInSnapshot(connection, layout, cancellationToken));
    }

    /// <summary>
    /// Merges duplicate groups into their lowest ID and renumbers out-of-range blocks, in one write transaction taken
    /// without waiting (another writer means SQLITE_BUSY and no change); then resets the key map and checks again.
    /// </summary>
    public static BlockDbRepairResult Repair(ISqliteConnection connection, LayoutState layout, string path, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        long merged, deleted, repointed, renumbered;
        try
        {
            (merged, deleted, repointed, renumbered) = Transactions.Run(connection, BlockDbSql.Begin.Text, () =>
            {
                // Read before anything is deleted: an ID handed out before the repair is never handed out again.
                var highest = ReadLong(connection, BlockDbSql.MaxBlockIdInRange);
                var (m, d, r) = MergeDuplicates(connection);
                var (renumbered, top) = RenumberOutOfRange(connection, layout, highest);
                layout.SealIds(connection, top);
                return (m, d, r, renumbered);
            });
        }
        catch (BlockDbException e) when (e.IsTransient)
        {
            // Only BEGIN IMMEDIATE waits for a lock: once it is taken, nothing else in the repair can be busy.
            throw e.Rephrase($"RepairAsync refuses to run beside another writer: the write lock on {Quoted.Path(path)} is held (another process, or a session of this database with an open batch). Nothing was changed. {e.Message}");
        }

        layout.AfterRepair();
        return new BlockDbRepairResult
        {
            MergedGroups = merged,
            DeletedBlocks = deleted,
            RepointedEntries = repointed,
            RenumberedBlocks = renumbered,
            After = Check(connection, layout, cancellationToken),
        };
    }

    private static BlockDbCheckResult CheckInSnapshot(ISqliteConnection connection, LayoutState layout, CancellationToken cancellationToken)
    {
        var counts = Counts(connection);
        long groups, extra;
        using (var duplicates = connection.Prepare(BlockDbSql.CheckDuplicateCounts))
        {
            duplicates.Step();
            (groups, extra) = (duplicates.ColumnInt64(0), duplicates.ColumnInt64(1));
            duplicates.Reset();
        }

        cancellationToken.ThrowIfCancellationRequested();
        var duplicateIds = groups == 0 ? BlockDbFinding.None : ListIds(connection, BlockDbSql.CheckDuplicateRows, distinct: false);
        var dangling = ListIds(connection, BlockDbSql.CheckDanglingEntries, distinct: true);
        cancellationToken.ThrowIfCancellationRequested();
        var lengths = ListIds(connection, BlockDbSql.CheckLengthMismatches, distinct: false);
        cancellationToken.ThrowIfCancellationRequested();
        var order = ListIds(connection, BlockDbSql.CheckEntryOrder, distinct: false);
        var outOfRange = ListIds(connection, BlockDbSql.CheckIdsOutOfRange, distinct: false, s => s.BindInt64(1, layout.Definition.MaxBlockId));
        var unusable = ListIds(connection, BlockDbSql.CheckUnusableHashes, distinct: false, s =>
        {
            s.BindText(1, layout.Definition.HashType);
            s.BindInt64(2, layout.Definition.MaxHashLength);
        });
        cancellationToken.ThrowIfCancellationRequested();
        var volumes = ListIds(connection, BlockDbSql.CheckVolumeProblems, distinct: false);
        var (mapMissing, guards) = layout.CheckLayout(connection, cancellationToken);
        var rules = layout.CheckRules(connection, cancellationToken);
        return new BlockDbCheckResult
        {
            Layout = layout.Definition.Layout,
            Counts = counts,
            DuplicateGroups = groups,
            Duplicates = duplicateIds with { Count = extra },
            DanglingEntries = dangling,
            LengthMismatches = lengths,
            EntryOrder = order,
            IdsOutOfRange = outOfRange,
            UnusableBlocks = unusable,
            VolumeProblems = volumes,
            MapMissing = mapMissing,
            GuardsPresent = guards,
            LayoutRules = rules,
            IntegrityCheck = connection.QueryText("PRAGMA integrity_check") ?? "(no answer)",
        };
    }

    private static (long Merged, long Deleted, long Repointed) MergeDuplicates(ISqliteConnection connection)
    {
        var pairs = new List<(long Id, long Keep)>();
        using (var rows = connection.Prepare(BlockDbSql.CheckDuplicateRows))
        {
            while (rows.Step())
            {
                pairs.Add((rows.ColumnInt64(0), rows.ColumnInt64(1)));
            }

            rows.Reset();
        }

        long repointed = 0;
        using var repoint = connection.Prepare(BlockDbSql.RepointEntries);
        using var delete = connection.Prepare(BlockDbSql.DeleteBlock);
        foreach (var (id, keep) in pairs)
        {
            repoint.BindInt64(1, keep);
            repoint.BindInt64(2, id);
            repointed += repoint.ExecuteNonQuery();
            delete.BindInt64(1, id);
            delete.ExecuteNonQuery();
        }

        return (pairs.Select(p => p.Keep).Distinct().LongCount(), pairs.Count, repointed);
    }

    /// <summary>Gives out-of-range blocks new IDs above every ID in range (and above the KeyMap high-water mark), moving their entries along.</summary>
    /// <returns>How many blocks were renumbered, and the highest ID in use or handed out afterwards.</returns>
    private static (long Renumbered, long Top) RenumberOutOfRange(ISqliteConnection connection, LayoutState layout, long highest)
    {
        var (count, ids) = ListIds(connection, BlockDbSql.CheckIdsOutOfRange, distinct: false, s => s.BindInt64(1, layout.Definition.MaxBlockId), keep: int.MaxValue);
        var next = Math.Max(highest, layout.RenumberFloor(connection)) + 1;
        if (count == 0)
        {
            return (0, next - 1);
        }

        using var renumber = connection.Prepare(BlockDbSql.RenumberBlock);
        using var repoint = connection.Prepare(BlockDbSql.RepointEntries);
        foreach (var id in ids)
        {
            if (next > layout.Definition.MaxBlockId)
            {
                throw new BlockDbException($"RepairAsync cannot renumber block {id}: no free ID is left in the layout's range. Nothing was changed.", SqliteResultCode.Full, SqliteResultCode.Full, null);
            }

            renumber.BindInt64(1, next);
            renumber.BindInt64(2, id);
            renumber.ExecuteNonQuery();
            repoint.BindInt64(1, next);
            repoint.BindInt64(2, id);
            repoint.ExecuteNonQuery();
            next++;
        }

        return (count, next - 1);
    }

    private static BlockDbCounts Counts(ISqliteConnection connection)
    {
        using var counts = connection.Prepare(BlockDbSql.Counts);
        counts.Step();
        var result = new BlockDbCounts(counts.ColumnInt64(0), counts.ColumnInt64(1), counts.ColumnInt64(2));
        counts.Reset();
        return result;
    }

    /// <summary>Runs a query of IDs (in ascending order) and returns the first <paramref name="keep"/> (each once when <paramref name="distinct"/>) and how many rows there were.</summary>
    private static BlockDbFinding ListIds(ISqliteConnection connection, SqlStatement query, bool distinct, Action<ISqliteStatement>? bind = null, int keep = BlockDbCheckResult.MaxListed)
    {
        using var statement = connection.Prepare(query);
        bind?.Invoke(statement);

        var first = new List<long>();
        long count = 0;
        long? previous = null;
        while (statement.Step())
        {
            var id = statement.ColumnInt64(0);
            count++;
            if (distinct && id == previous)
            {
                continue;
            }

            previous = id;
            if (first.Count < keep)
            {
                first.Add(id);
            }
        }

        statement.Reset();
        return new BlockDbFinding(count, first);
    }

    /// <summary>Keeps the <see cref="BlockDbCheckResult.MaxListed"/> lowest IDs seen.</summary>
    public static void Keep(List<long> first, long id)
    {
        if (first.Count < BlockDbCheckResult.MaxListed)
        {
            first.Add(id);
        }
        else if (id < first.Max())
        {
            first.Remove(first.Max());
            first.Add(id);
        }
    }

    private static long ReadLong(ISqliteConnection connection, string sql) =>
        long.Parse(connection.QueryText(sql) ?? "0", NumberStyles.Integer, CultureInfo.InvariantCulture);
}
