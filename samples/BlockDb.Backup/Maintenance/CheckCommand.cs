using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Maintenance;

/// <summary><c>check</c> and <c>repair</c>: <see cref="IBlockDatabase.CheckAsync"/> and <see cref="IBlockDatabase.RepairAsync"/> on the index, shown as a table.</summary>
internal static class CheckCommand
{
    public static async Task<int> CheckAsync(CommonSettings common, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var check = await app.Database.CheckAsync(cancellationToken).ConfigureAwait(false);
        Table($"check of {app.DatabasePath}", check).Write();
        return check.IsClean ? ExitCodes.Success : ExitCodes.Difference;
    }

    public static async Task<int> RepairAsync(CommonSettings common, CancellationToken cancellationToken)
    {
        await using var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var repair = await app.Database.RepairAsync(cancellationToken).ConfigureAwait(false);
        new ReportTable($"repair of {app.DatabasePath}", "changed", "count")
            .Row("duplicate groups merged into their lowest ID", ReportTable.Count(repair.MergedGroups))
            .Row("duplicate blocks deleted", ReportTable.Count(repair.DeletedBlocks))
            .Row("blockset entries repointed", ReportTable.Count(repair.RepointedEntries))
            .Row("blocks renumbered into the layout's range", ReportTable.Count(repair.RenumberedBlocks))
            .Write();
        Table("check after the repair", repair.After).Write();
        return repair.After.IsClean ? ExitCodes.Success : ExitCodes.Difference;
    }

    /// <summary>
    /// The table of a check: each finding with its count and first IDs, the layout's own rules (on a Duplicati database,
    /// Duplicati's consistency rules with Duplicati's messages), and the verdict.
    /// </summary>
    public static ReportTable Table(string title, BlockDbCheckResult check)
    {
        var table = BlockDbFindings(title, check);
        if (check.Layout == BlockLayout.Duplicati && check.LayoutRules.Count == 0)
        {
            table.Row("Duplicati's consistency rules", "0", string.Empty);
        }

        foreach (var rule in check.LayoutRules)
        {
            table.Row($"{rule.Rule}: {rule.Message}", ReportTable.Count(rule.Count), Ids(rule.FirstIds));
        }

        return table
            .Row("integrity_check", check.IntegrityCheck, string.Empty)
            .Row("verdict", check.IsClean ? "clean" : "PROBLEMS FOUND", string.Empty);
    }

    /// <summary>BlockDb's own findings; the key map's two rows only for a KeyMap file (no other layout has a key map or its guards).</summary>
    private static ReportTable BlockDbFindings(string title, BlockDbCheckResult check)
    {
        var table = new ReportTable(title, "finding", "count", "first IDs")
            .Row("layout", check.Layout.ToString(), string.Empty)
            .Row("blocks / blocksets / entries", $"{ReportTable.Count(check.Counts.Blocks)} / {ReportTable.Count(check.Counts.Blocksets)} / {ReportTable.Count(check.Counts.BlocksetEntries)}", string.Empty)
            .Row("duplicate (hash, size) groups", $"{ReportTable.Count(check.DuplicateGroups)} ({ReportTable.Count(check.Duplicates.Count)} extra rows)", Ids(check.Duplicates.FirstIds))
            .Finding("entries naming a missing block", check.DanglingEntries)
            .Finding("blocksets whose length is not the sum of their blocks", check.LengthMismatches)
            .Finding("blocksets with entries out of order or with gaps", check.EntryOrder)
            .Finding("block IDs outside the layout's range", check.IdsOutOfRange)
            .Finding("blocks no lookup can ask for (hash or size)", check.UnusableBlocks)
            .Finding("blocks in a volume that is missing or Deleted", check.VolumeProblems);
        return check.Layout != BlockLayout.KeyMap
            ? table
            : table
                .Finding("blocks the key map did not hold", check.MapMissing)
                .Row("KeyMap guards present", check.GuardsPresent ? "yes" : "NO", string.Empty);
    }

    private static string Ids(IReadOnlyList<long> ids) => string.Join(", ", ids.Select(ReportTable.Count));
}
