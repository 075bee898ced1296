namespace BlockDb.KeyMap;

/// <summary>
/// The file's version as a key map sees it: <c>BlockDbState.Generation</c> (moved by flagged writes) and
/// <c>PRAGMA schema_version</c> (moved by any DDL). Both only grow, in commit order.
/// </summary>
/// <param name="Generation">The change counter.</param>
/// <param name="SchemaVersion">The schema cookie.</param>
internal readonly record struct MapVersion(long Generation, long SchemaVersion)
{
    /// <summary>Before the first load.</summary>
    public static MapVersion Unloaded { get; } = new(-1, -1);

    /// <summary>Whether a snapshot at this version saw changes a map at <paramref name="other"/> has not.</summary>
    public bool IsNewerThan(MapVersion other) => Generation > other.Generation || SchemaVersion > other.SchemaVersion;
}
