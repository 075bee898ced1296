using BlockDb.Backup.Cli;
using BlockDb.Backup.Output;

namespace BlockDb.Backup.Maintenance;

/// <summary>
/// <c>upgrade-duplicati</c>: <see cref="DuplicatiUpgrade.ApplyAsync"/> (or, with <c>--revert</c>,
/// <see cref="DuplicatiUpgrade.RevertAsync"/>) on a Duplicati local database, then <see cref="IBlockDatabase.CheckAsync"/>
/// with Duplicati's consistency rules. Refused while another program (Duplicati) has the file open.
/// </summary>
internal static class UpgradeDuplicatiCommand
{
    public static async Task<int> RunAsync(CommonSettings common, bool revert, CancellationToken cancellationToken)
    {
        BlockDbOptions options;
        string path;
        await using (var app = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false))
        {
            // Only the validated options: the upgrade opens the file itself and needs it to itself.
            (options, path) = (app.Options, app.DatabasePath);
        }

        var changed = revert
            ? await DuplicatiUpgrade.RevertAsync(options, cancellationToken).ConfigureAwait(false)
            : await DuplicatiUpgrade.ApplyAsync(options, cancellationToken).ConfigureAwait(false);
        new ReportTable($"{(revert ? "revert of the Duplicati upgrade" : "Duplicati upgrade")} of {path}", string.Empty, "value")
            .Row(revert ? "indexes created" : "indexes dropped", changed.Count == 0 ? $"none (the file was {(revert ? "not upgraded" : "upgraded already")})" : string.Join(", ", changed))
            .Row("statements (Duplicati can run them itself)", string.Join("\n", revert ? DuplicatiUpgrade.RevertStatements : DuplicatiUpgrade.Statements))
            .Write();

        await using var checkApp = await AppServices.CreateForExistingAsync(common).ConfigureAwait(false);
        var check = await checkApp.Database.CheckAsync(cancellationToken).ConfigureAwait(false);
        CheckCommand.Table($"check of {path}", check).Write();
        return check.IsClean ? ExitCodes.Success : ExitCodes.Difference;
    }
}
