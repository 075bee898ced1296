namespace BlockDb.KeyMap;

/// <summary>A snapshot that passed every check: its slots, (W, V) and token, for <see cref="BlockKeyMap"/> to adopt.</summary>
internal readonly record struct KeyMapFileLoad(ulong[] Slots, long Count, long CoveredThrough, MapVersion Version, Guid Token);
