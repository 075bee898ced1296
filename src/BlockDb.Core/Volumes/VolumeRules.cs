namespace BlockDb.Volumes;

/// <summary>How every provider stores a <see cref="VolumeState"/> (by name) and which changes of state it allows.</summary>
internal static class VolumeRules
{
    /// <summary>The longest volume name accepted, in characters.</summary>
    public const int MaxNameLength = 1024;

    /// <summary>
    /// Checks a volume name, for every call that takes one (register and find) on every provider: 1 to
    /// <see cref="MaxNameLength"/> characters of valid UTF-16, with no control character and no whitespace at either
    /// end, as a file name on a backend is (Duplicati's are <c>duplicati-b….dblock.zip</c>). The name is stored and
    /// compared exactly as given (ordinal, not normalized). An unpaired surrogate would reach the database as U+FFFD
    /// (SQLite) or fail inside the driver (Npgsql), so two different names would be one volume.
    /// </summary>
    /// <param name="name">The name.</param>
    /// <exception cref="ArgumentNullException">The name is null.</exception>
    /// <exception cref="ArgumentException">The name is empty, longer than <see cref="MaxNameLength"/> characters, only whitespace, starts or ends with whitespace, or holds a control character or an unpaired surrogate.</exception>
    public static void ValidateName(string? name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (NameProblem(name) is { } problem)
        {
            throw new ArgumentException(
                $"The volume name {Quoted.Value(name)} ({name.Length} characters) {problem}; a volume name is 1 to {MaxNameLength:N0} characters of valid UTF-16 with no control character and no whitespace at either end, such as duplicati-b1234.dblock.zip.",
                nameof(name));
        }
    }

    private static string? NameProblem(string name)
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

    /// <summary>
    /// Checks the state a volume is registered in: one before <see cref="VolumeState.Deleting"/> (Temporary, Uploading,
    /// Uploaded or Verified; a recreate registers the volumes it finds as Uploaded). A volume that is being deleted, or
    /// is deleted, can receive no block, so registering one in those states records nothing a backup can use; an
    /// existing volume gets there through <see cref="CanChange"/>.
    /// </summary>
    /// <param name="state">The state asked for.</param>
    /// <exception cref="ArgumentOutOfRangeException">Not a defined state, or <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/>.</exception>
    public static void ValidateNewState(VolumeState state)
    {
        ValidateState(state);
        if (IsGoing(state))
        {
            throw new ArgumentOutOfRangeException(
                nameof(state),
                state,
                $"A volume cannot be registered as {state}; a new volume starts in one of {string.Join(", ", Enum.GetValues<VolumeState>().Where(s => !IsGoing(s)))}, and reaches {VolumeState.Deleting} and {VolumeState.Deleted} through SetVolumeStateAsync.");
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
            : throw new BlockDbFormatException($"Volume {volumeId} has the state {Quoted.Value(text)}, which is not one BlockDb writes ({string.Join(", ", Enum.GetNames<VolumeState>())}); it was written outside BlockDb.");
}
