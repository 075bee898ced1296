namespace BlockDb.Drivers;

/// <summary>
/// The checks of the calls that take many blocks at once
/// (<see cref="IBlockWriter.SelectXorInsertAsync(ReadOnlyMemory{BinaryBlockKey}, Memory{SelectXorInsertResult}, long?, CancellationToken)"/>),
/// the same for every provider.
/// </summary>
public static class BlockBatchRules
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

    /// <summary>
    /// The many-block select-xor-insert done as one text call per block, for a provider whose engine gains nothing
    /// from doing it in one statement yet: the same results and failure behaviour as the batch call's contract.
    /// </summary>
    /// <param name="writer">The provider's session or shared repository.</param>
    /// <param name="blocks">The blocks, checked by <see cref="Validate"/> here.</param>
    /// <param name="results">Receives one result per block.</param>
    /// <param name="volumeId">The volume of new blocks, or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>How many blocks were created.</returns>
    public static async ValueTask<int> SelectXorInsertEachAsync(IBlockWriter writer, ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, long? volumeId, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(writer);
        Validate(blocks.Span, results.Length);
        var created = 0;
        for (var i = 0; i < blocks.Length; i++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var block = blocks.Span[i];
            var result = await writer.SelectXorInsertAsync(block.Hash, block.Size, volumeId, cancellationToken).ConfigureAwait(false);
            results.Span[i] = result;
            created += result.Created ? 1 : 0;
        }

        return created;
    }

    /// <summary>
    /// The one-call file (blocks, then the blockset from their IDs) done as <see cref="SelectXorInsertEachAsync"/> and
    /// <see cref="IBlockWriter.AddBlocksetAsync(IReadOnlyList{long}, string?, CancellationToken)"/>.
    /// </summary>
    /// <param name="writer">The provider's session or shared repository.</param>
    /// <param name="blocks">The file's blocks in order.</param>
    /// <param name="results">Receives one result per block.</param>
    /// <param name="fullHash">The content hash, or the empty value.</param>
    /// <param name="volumeId">The volume of new blocks, or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked before and between blocks.</param>
    /// <returns>The new blockset's ID.</returns>
    public static async ValueTask<long> SelectXorInsertBlocksetEachAsync(IBlockWriter writer, ReadOnlyMemory<BinaryBlockKey> blocks, Memory<SelectXorInsertResult> results, BlockHash fullHash, long? volumeId, CancellationToken cancellationToken)
    {
        await SelectXorInsertEachAsync(writer, blocks, results, volumeId, cancellationToken).ConfigureAwait(false);
        var ids = new long[blocks.Length];
        for (var i = 0; i < ids.Length; i++)
        {
            ids[i] = results.Span[i].Id;
        }

        return await writer.AddBlocksetAsync(ids, fullHash.IsEmpty ? null : fullHash.ToString(), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The binary select-xor-insert as the text call (base64), for a provider that binds hashes as text anyway.
    /// </summary>
    /// <param name="writer">The provider's session or shared repository.</param>
    /// <param name="hash">The block hash; refused when empty.</param>
    /// <param name="size">The block size in bytes.</param>
    /// <param name="volumeId">The volume of a new block, or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels before the lookup.</param>
    /// <returns>The text call's result.</returns>
    /// <exception cref="ArgumentException">The hash is empty.</exception>
    public static ValueTask<SelectXorInsertResult> SelectXorInsertAsText(IBlockWriter writer, in BlockHash hash, long size, long? volumeId, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(writer);
        BlockHash.Validate(hash, nameof(hash));
        var text = hash.ToString();
        return volumeId is { } volume
            ? writer.SelectXorInsertAsync(text, size, volume, cancellationToken)
            : writer.SelectXorInsertAsync(text, size, cancellationToken);
    }
}
