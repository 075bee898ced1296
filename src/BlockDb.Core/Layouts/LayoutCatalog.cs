using BlockDb.KeyMap;

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
    ];

    /// <summary>The layout a new file gets when none is configured.</summary>
    public static LayoutDefinition Default => Of(IndexOptions.DefaultLayout);

    /// <summary>The definition of <paramref name="layout"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Not a layout of this build.</exception>
    public static LayoutDefinition Of(BlockLayout layout) =>
        All.FirstOrDefault(l => l.Layout == layout) ?? throw new ArgumentOutOfRangeException(nameof(layout), layout, "Unknown block layout.");

    /// <summary>The layout a file of schema version 2 or later records by name (the exact name only: a number, another case or an unknown name is not guessed).</summary>
    public static LayoutDefinition? ByRecordedName(string name) => All.FirstOrDefault(l => l.Layout.ToString() == name);
}
