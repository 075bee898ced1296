namespace BlockDb.Import;

/// <summary>
/// Where a bulk import writes: one provider's connection with a transaction it keeps open until
/// <see cref="CommitAsync"/>. <see cref="BulkImport"/> drives it; a provider implements only this.
/// </summary>
internal interface IImportTarget : IAsyncDisposable
{
    /// <summary>Select-xor-inserts blocks of one volume inside the open transaction (opening it if needed), or holds them for <see cref="FlushAsync"/>.</summary>
    /// <param name="blocks">Checked blocks; the memory is the caller's again once the call returns.</param>
    /// <param name="volumeId">Their volume, or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Checked between blocks.</param>
    /// <returns>How many were created; 0 for blocks held for <see cref="FlushAsync"/>.</returns>
    ValueTask<int> AddBlocksAsync(ReadOnlyMemory<BlockKey> blocks, long? volumeId, CancellationToken cancellationToken);

    /// <summary>Adds a blockset inside the open transaction unless one with its full hash and length exists, or holds it for <see cref="FlushAsync"/>.</summary>
    /// <param name="blockset">A checked blockset.</param>
    /// <param name="length">Its length in bytes (the sum of its block sizes).</param>
    /// <param name="cancellationToken">Checked between blocks.</param>
    /// <returns>Whether it was created (false: an existing one was found, or it is held for <see cref="FlushAsync"/>).</returns>
    ValueTask<bool> AddBlocksetAsync(ImportBlockset blockset, long length, CancellationToken cancellationToken);

    /// <summary>
    /// Writes the items held for the open transaction, with the same meaning as adding them one by one (an item that
    /// exists, or comes earlier in the transaction, is skipped; the first refused item's error is thrown), and returns how
    /// many of them were created. <see cref="BulkImport"/> calls it once before each <see cref="CommitAsync"/>. For a
    /// provider that writes whole transactions at once (the PostgreSQL provider streams them by <c>COPY</c>); a target
    /// that writes each item when it is added holds none back: the default returns 0.
    /// </summary>
    /// <param name="cancellationToken">Checked before the write.</param>
    /// <returns>How many held items were created.</returns>
    ValueTask<long> FlushAsync(CancellationToken cancellationToken) => ValueTask.FromResult(0L);

    /// <summary>Commits the open transaction, if any.</summary>
    /// <param name="cancellationToken">Checked before the commit.</param>
    /// <returns>A task that completes once the transaction is durable.</returns>
    ValueTask CommitAsync(CancellationToken cancellationToken);
}
