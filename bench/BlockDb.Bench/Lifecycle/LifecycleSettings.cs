using BlockDb.Opening;

namespace BlockDb.Bench.Lifecycle;

/// <summary>What the lifecycle study runs (issue 12's targets).</summary>
/// <param name="Providers">SQLite providers, in the order of the first repetition.</param>
/// <param name="Layouts">Block layouts of the delete-and-collect part, in the order of the first repetition.</param>
/// <param name="ConvertTargets">Layouts a TextHash file is converted to (none: no conversion part).</param>
/// <param name="Blocksets">Blocksets (files) of the delete-and-collect template; 0: no delete-and-collect part.</param>
/// <param name="ConvertBlocks">Blocks of the TextHash file the conversion part converts.</param>
/// <param name="DeleteShare">The share of blocksets deleted, evenly spread.</param>
/// <param name="CommitEvery">The sessions' <c>Batching:CommitEvery</c> while deleting (BlockDb's default 1,000).</param>
/// <param name="Repetitions">Repetitions; each runs every configuration once, in an order rotated by one per repetition.</param>
/// <param name="SampleBlocksets">Remaining blocksets listed and compared with the plan after each delete-and-collect run.</param>
/// <param name="Seed">The data seed.</param>
/// <param name="WorkFolder">Templates and run copies.</param>
/// <param name="OutputFolder">lifecycle.md, runs.csv, summary.csv.</param>
/// <param name="CommandLine">The command line, for the report.</param>
internal sealed record LifecycleSettings(
    IReadOnlyList<string> Providers,
    IReadOnlyList<BlockLayout> Layouts,
    IReadOnlyList<BlockLayout> ConvertTargets,
    int Blocksets,
    int ConvertBlocks,
    double DeleteShare,
    int CommitEvery,
    int Repetitions,
    int SampleBlocksets,
    int Seed,
    string WorkFolder,
    string OutputFolder,
    string CommandLine)
{
    /// <summary>Issue 12's sizes: 1e6 blocksets, a 1e6-block file to convert, 3 repetitions.</summary>
    public static LifecycleSettings Default(string work, string output, string commandLine) => new(
        [ProviderCatalog.PInvoke, ProviderCatalog.MicrosoftData, ProviderCatalog.SystemData],
        [BlockLayout.TextHash, BlockLayout.BlobHash, BlockLayout.KeyMap],
        [BlockLayout.KeyMap, BlockLayout.BlobHash],
        1_000_000,
        1_000_000,
        0.1,
        1000,
        3,
        1000,
        42,
        work,
        output,
        commandLine);

    /// <summary>Seconds: every provider, layout and conversion on 2,000 blocksets and a 2,000-block file, one repetition (CI).</summary>
    public static LifecycleSettings Smoke(string work, string output, string commandLine) =>
        Default(work, output, commandLine) with { Blocksets = 2000, ConvertBlocks = 2000, Repetitions = 1, SampleBlocksets = 100 };
}
