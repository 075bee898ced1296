namespace BlockDb.Sessions;

/// <summary>How volume states are stored (by name) and which changes are allowed.</summary>
internal static class VolumeStates
{
    /// <summary>A stored state name.</summary>
    /// <exception cref="BlockDbFormatException">The stored text is not a state name (written outside BlockDb).</exception>
    public static VolumeState Parse(string? text, long volumeId) =>
        Enum.TryParse<VolumeState>(text, ignoreCase: false, out var state) && Enum.IsDefined(state) && text == state.ToString()
            ? state
            : throw new BlockDbFormatException($"Volume {volumeId} has the state '{text}', which is not one BlockDb writes ({string.Join(", ", Enum.GetNames<VolumeState>())}); it was written outside BlockDb.");

    /// <summary>
    /// Whether a volume may go from <paramref name="from"/> to <paramref name="to"/>: forward along Temporary → Uploading →
    /// Uploaded → Verified (skipping allowed), any of those → Deleting, Deleting → Deleted, and to the same state.
    /// </summary>
    public static bool CanMove(VolumeState from, VolumeState to) =>
        from == to
        || (from < VolumeState.Deleting && ((to > from && to <= VolumeState.Verified) || to == VolumeState.Deleting))
        || (from == VolumeState.Deleting && to == VolumeState.Deleted);
}
