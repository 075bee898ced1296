using BlockDb.Volumes;

namespace BlockDb.Engine;

/// <summary>
/// The checks of a call's input, the same for every engine, made before anything is written: each throws the
/// <see cref="ArgumentException"/> family with a message from <see cref="Errors"/> saying what was wrong and what is
/// allowed.
/// </summary>
internal static class Require
{
    /// <summary>How many blocks of a span call run between two looks at the cancellation token.</summary>
    public const int CancellationCheckInterval = 256;

    /// <summary>
    /// A block named by its key: anything but <c>default(BlockKey)</c>, the one key its constructor cannot make (it
    /// checked the hash and the size, so they are not checked again here).
    /// </summary>
    /// <exception cref="ArgumentException">The key is <c>default(BlockKey)</c>.</exception>
    public static void Block(in BlockKey block)
    {
        if (block.Size < 1)
        {
            throw Errors.BlockKeyDefault();
        }
    }

    /// <summary>A listing into the caller's buffer: from index 0 or more, into at least one element.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The index is negative or the buffer empty.</exception>
    public static void Listing(int fromIndex, int intoLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(fromIndex, nameof(fromIndex));
        if (intoLength < 1)
        {
            throw new ArgumentOutOfRangeException("into", intoLength, "The buffer to list blocks into is empty; give it at least one element (a blockset's block count is in GetBlocksetAsync).");
        }
    }

    /// <summary>A span call's blocks and results buffer.</summary>
    /// <exception cref="ArgumentException">The buffer is too short, or a block is <c>default(BlockKey)</c>.</exception>
    public static void Blocks(ReadOnlySpan<BlockKey> blocks, int resultsLength)
    {
        if (resultsLength < blocks.Length)
        {
            throw Errors.ResultsTooShort(resultsLength, blocks.Length);
        }

        for (var i = 0; i < blocks.Length; i++)
        {
            if (blocks[i].Size < 1)
            {
                throw Errors.SpanBlockDefault(i);
            }
        }
    }

    /// <summary>A blockset's length so far plus block <paramref name="index"/>'s size, in bytes (every engine sums a blockset's length with this).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The length would pass <see cref="long.MaxValue"/> bytes.</exception>
    public static long BlocksetLength(long length, long size, int index) =>
        TryAddLength(ref length, size) ? length : throw Errors.BlocksetTooLong(size, index);

    /// <summary>Adds a block's size to a blockset's length in bytes; false, with the length unchanged, when the sum would pass <see cref="long.MaxValue"/>.</summary>
    public static bool TryAddLength(ref long length, long size)
    {
        if (length > long.MaxValue - size)
        {
            return false;
        }

        length += size;
        return true;
    }

    /// <summary>A blockset's full hash and byte length, to look it up.</summary>
    /// <exception cref="ArgumentException">The hash is empty or the length negative.</exception>
    public static void FullHash(in BlockHash fullHash, long length)
    {
        BlockHash.Validate(fullHash, nameof(fullHash));
        ArgumentOutOfRangeException.ThrowIfNegative(length, nameof(length));
    }

    /// <summary>
    /// A volume name, for every call that takes one (register and find) on every engine: 1 to
    /// <see cref="VolumeRules.MaxNameLength"/> characters of valid UTF-16, with no control character and no whitespace at
    /// either end, as a file name on a backend is. The name is stored and compared exactly as given (ordinal).
    /// </summary>
    /// <exception cref="ArgumentNullException">The name is null.</exception>
    /// <exception cref="ArgumentException">The name breaks one of those rules.</exception>
    public static void VolumeName(string? name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (VolumeRules.NameProblem(name) is { } problem)
        {
            throw Errors.VolumeNameInvalid(name, problem);
        }
    }

    /// <summary>A state given by a caller.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Not a defined state.</exception>
    public static void VolumeState(VolumeState state)
    {
        if (!Enum.IsDefined(state))
        {
            throw Errors.VolumeStateUndefined(state);
        }
    }

    /// <summary>The state a volume is registered in: one before <see cref="BlockDb.VolumeState.Deleting"/> (a volume that is going can receive no block).</summary>
    /// <exception cref="ArgumentOutOfRangeException">Not a defined state, or Deleting or Deleted.</exception>
    public static void NewVolumeState(VolumeState state)
    {
        VolumeState(state);
        if (VolumeRules.IsGoing(state))
        {
            throw Errors.VolumeStateNotNew(state);
        }
    }

    /// <summary>A volume size given by a caller, in bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Negative.</exception>
    public static void VolumeSize(long? size)
    {
        if (size is < 0)
        {
            throw Errors.VolumeSizeNegative(size.Value);
        }
    }

    /// <summary>Throws when cancelled, every <see cref="CancellationCheckInterval"/> blocks of a span call from the first.</summary>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    public static void NotCancelled(int index, CancellationToken cancellationToken)
    {
        if (index % CancellationCheckInterval == 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
        }
    }
}
