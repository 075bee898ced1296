namespace BlockDb.Volumes;

/// <summary>How every provider stores a <see cref="VolumeState"/> (by name) and which changes of state it allows.</summary>
internal static class VolumeRules
{
    /// <summary>The longest volume name accepted, in characters.</summary>
    public const int MaxNameLength = 1024;

    /// <summary>What is wrong with a volume name (<see cref="Engine.Require.VolumeName"/>), or null.</summary>
    public static string? NameProblem(string name)
    {
        if (name.Length == 0)
        {
            return "is empty";
        }

        if (name.Length > MaxNameLength)
        {
            return $"is longer than {MaxNameLength:N0} characters";
        }

        if (string.IsNullOrWhiteSpace(name))
        {
            return "is only whitespace";
        }

        if (char.IsWhiteSpace(name[0]) || char.IsWhiteSpace(name[^1]))
        {
            return "starts or ends with whitespace";
        }

        for (var i = 0; i < name.Length; i++)
        {
            var c = name[i];
            if (char.IsHighSurrogate(c) && i + 1 < name.Length && char.IsLowSurrogate(name[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(c))
            {
                return $"holds an unpaired surrogate (U+{(int)c:X4}) at index {i}: it is not valid UTF-16, and the database would store another name";
            }
            else if (char.IsControl(c))
            {
                return $"holds the control character U+{(int)c:X4} at index {i}";
            }
        }

        return null;
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
            : throw new BlockDbFormatException($"Volume {volumeId} has the state {Quoted.Value(text)}, which is not one BlockDb writes ({string.Join(", ", Enum.GetNames<VolumeState>())}); it was written outside BlockDb.");
}
