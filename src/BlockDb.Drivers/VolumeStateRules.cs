namespace BlockDb.Drivers;

/// <summary>How every provider stores a <see cref="VolumeState"/> (by name) and which changes of state it allows.</summary>
public static class VolumeStateRules
{
    /// <summary>The longest volume name accepted, in characters.</summary>
    public const int MaxNameLength = 1024;

    /// <summary>Checks a volume name.</summary>
    /// <param name="name">The name.</param>
    /// <exception cref="ArgumentException">Null, empty, longer than <see cref="MaxNameLength"/> characters, or holding a NUL.</exception>
    public static void ValidateName(string? name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (name.Length > MaxNameLength || name.Contains('\0', StringComparison.Ordinal))
        {
            throw new ArgumentException($"A volume name is 1 to {MaxNameLength} characters without NUL; the name given has {name.Length}.", nameof(name));
        }
    }

    /// <summary>Checks a state given by a caller.</summary>
    /// <param name="state">The state.</param>
    /// <exception cref="ArgumentOutOfRangeException">Not a defined state.</exception>
    public static void ValidateState(VolumeState state)
    {
        if (!Enum.IsDefined(state))
        {
            throw new ArgumentOutOfRangeException(nameof(state), state, $"Not a volume state; allowed: {string.Join(", ", Enum.GetNames<VolumeState>())}.");
        }
    }

    /// <summary>Checks a volume size given by a caller.</summary>
    /// <param name="size">The size in bytes, or null.</param>
    /// <exception cref="ArgumentOutOfRangeException">Negative.</exception>
    public static void ValidateSize(long? size)
    {
        if (size is < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(size), size, "A volume's size is a number of bytes, 0 or more.");
        }
    }

    /// <summary>The states that receive no new block, and whose blocks no new blockset may name.</summary>
    /// <param name="state">The state.</param>
    /// <returns><see langword="true"/> for <see cref="VolumeState.Deleting"/> and <see cref="VolumeState.Deleted"/>.</returns>
    public static bool IsGoing(VolumeState state) => state is VolumeState.Deleting or VolumeState.Deleted;

    /// <summary>
    /// Whether a volume may go from <paramref name="from"/> to <paramref name="to"/>: forward along Temporary →
    /// Uploading → Uploaded → Verified (steps may be skipped), from any of those to Deleting, from Deleting to Deleted, and
    /// to the state it is in. (Whether its blocks allow Deleting or Deleted is the provider's to check.)
    /// </summary>
    /// <param name="from">The state now.</param>
    /// <param name="to">The state asked for.</param>
    /// <returns>Whether the change is allowed.</returns>
    public static bool CanChange(VolumeState from, VolumeState to) =>
        from == to
        || (from < VolumeState.Deleting && ((to > from && to <= VolumeState.Verified) || to == VolumeState.Deleting))
        || (from == VolumeState.Deleting && to == VolumeState.Deleted);

    /// <summary>The message of a refused change of state.</summary>
    /// <param name="volumeId">The volume.</param>
    /// <param name="from">The state now.</param>
    /// <param name="to">The state asked for.</param>
    /// <returns>What was refused and what is allowed.</returns>
    public static string Refused(long volumeId, VolumeState from, VolumeState to) =>
        $"Volume {volumeId} cannot go from {from} to {to}; allowed: forward along Temporary, Uploading, Uploaded, Verified; from any of those to Deleting; from Deleting to Deleted; or to the state it is in.";

    /// <summary>A stored state name.</summary>
    /// <param name="text">The stored text.</param>
    /// <param name="volumeId">The volume, for the message.</param>
    /// <returns>The state.</returns>
    /// <exception cref="BlockDbFormatException">The stored text is not a state name (written outside BlockDb).</exception>
    public static VolumeState Parse(string? text, long volumeId) =>
        Enum.TryParse<VolumeState>(text, ignoreCase: false, out var state) && Enum.IsDefined(state) && text == state.ToString()
            ? state
            : throw new BlockDbFormatException($"Volume {volumeId} has the state '{text}', which is not one BlockDb writes ({string.Join(", ", Enum.GetNames<VolumeState>())}); it was written outside BlockDb.");
}
