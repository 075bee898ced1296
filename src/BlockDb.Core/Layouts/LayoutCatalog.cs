using BlockDb.KeyMap;
using BlockDb.Layouts.Duplicati;

namespace BlockDb.Layouts;

/// <summary>
/// The block layouts this build knows, one line each. A new layout is a <see cref="BlockLayout"/> value, one
/// <see cref="LayoutDefinition"/> file (with its store), and one line here.
/// </summary>
internal static class LayoutCatalog
{
    /// <summary>Every layout, in <see cref="BlockLayout"/> order.</summary>
    public static IReadOnlyList<LayoutDefinition> All { get; } =
    [
        TextHashLayout.Instance,
        BlobHashLayout.Instance,
        KeyMapLayout.Instance,
        DuplicatiLayout.Instance,
    ];

    /// <summary>The layouts BlockDb creates files of (not <see cref="BlockLayout.Duplicati"/>, whose files Duplicati creates), in <see cref="BlockLayout"/> order.</summary>
    public static IReadOnlyList<BlockLayout> Created { get; } = [.. All.Where(l => l.CreateRefused is null).Select(l => l.Layout)];

    /// <summary>The layout a new file gets when none is configured.</summary>
    public static LayoutDefinition Default => Of(IndexOptions.DefaultLayout);

    /// <summary>The definition of <paramref name="layout"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Not a layout of this build.</exception>
    public static LayoutDefinition Of(BlockLayout layout) =>
        All.FirstOrDefault(l => l.Layout == layout) ?? throw new ArgumentOutOfRangeException(nameof(layout), layout, "Unknown block layout.");

    /// <summary>The layout a file of schema version 2 or later records by name (the exact name only: a number, another case or an unknown name is not guessed).</summary>
    /// <remarks>Only layouts BlockDb creates are recorded: a BlockDb file naming <see cref="BlockLayout.Duplicati"/> is not one.</remarks>
    public static LayoutDefinition? ByRecordedName(string name) => All.FirstOrDefault(l => l.CreateRefused is null && l.Layout.ToString() == name);
}
