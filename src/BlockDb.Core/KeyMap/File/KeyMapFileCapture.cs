namespace BlockDb.KeyMap;

/// <summary>
/// A still map's table and (W, V), to write; <paramref name="Unchanged"/> is the token of the snapshot it was loaded from
/// when it gained nothing since; <paramref name="Wrote"/>, whether its database's sessions committed blocks into it.
/// </summary>
internal sealed record KeyMapFileCapture(ulong[] Slots, long Count, long CoveredThrough, MapVersion Version, Guid? Unchanged, bool Wrote);
