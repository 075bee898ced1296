namespace BlockDb.Sessions;

/// <summary>
/// The checks of the calls that take many blocks at once
/// (<see cref="IBlockWriter.SelectXorInsertAsync(ReadOnlyMemory{BinaryBlockKey}, Memory{SelectXorInsertResult}, long?, CancellationToken)"/>),
/// the same for every provider.
/// </summary>
internal static class BlockBatchRules
{
    /// <summary>How many blocks run between two looks at the cancellation token.</summary>
    public const int CancellationCheckInterval = 256;

    /// <summary>Checks every block and the results buffer before anything is written.</summary>
    /// <param name="blocks">The blocks of the call.</param>
    /// <param name="resultsLength">The length of the caller's results buffer.</param>
    /// <exception cref="ArgumentException">The buffer is too short, or a block's hash is empty or its size below 1.</exception>
    public static void Validate(ReadOnlySpan<BinaryBlockKey> blocks, int resultsLength)
    {
        if (resultsLength < blocks.Length)
        {
            throw new ArgumentException($"The results buffer holds {resultsLength} results and there are {blocks.Length} blocks; give a buffer at least as long as the blocks.", "results");
        }

        for (var i = 0; i < blocks.Length; i++)
        {
            if (blocks[i].Hash.IsEmpty || blocks[i].Size < 1)
            {
                throw new ArgumentException($"Block {i} is invalid: {blocks[i].Hash.Length} hash bytes, size {blocks[i].Size}; give a hash of 1 to {BlockHash.MaxBytes} bytes and a size of 1 byte or more. Nothing was written.", "blocks");
            }
        }
    }

    /// <summary>Throws when cancelled, every <see cref="CancellationCheckInterval"/> blocks from the first.</summary>
    /// <param name="index">The block about to run.</param>
    /// <param name="cancellationToken">The call's token.</param>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    public static void CheckCancellation(int index, CancellationToken cancellationToken)
    {
        if (index % CancellationCheckInterval == 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
        }
    }
}
