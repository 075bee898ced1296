namespace BlockDb;

/// <summary>One block of a bulk import (<see cref="IBlockDatabase.ImportBlocksAsync"/>).</summary>
/// <param name="Block">The block (not <c>default(BlockKey)</c>).</param>
/// <param name="VolumeId">The volume that holds the block, or <see langword="null"/> for none; it must exist and not be <see cref="VolumeState.Deleting"/> or <see cref="VolumeState.Deleted"/> when the block is new.</param>
public readonly record struct ImportBlock(BlockKey Block, long? VolumeId = null);

/// <summary>One blockset of a bulk import (<see cref="IBlockDatabase.ImportBlocksetsAsync"/>): a file's blocks in order.</summary>
/// <param name="Blocks">The blocks in file order, each already in the index; none for an empty file.</param>
/// <param name="FullHash">The hash of the whole content, or the empty <see langword="default"/> for none. A blockset with a full hash is imported once: one with the same full hash and length already in the index is reused.</param>
public sealed record ImportBlockset(IReadOnlyList<BlockKey> Blocks, BlockHash FullHash = default);

/// <summary>How far a bulk import has got, reported after each committed transaction.</summary>
/// <param name="Read">Items read from the input so far.</param>
/// <param name="Created">Items the import added to the index (committed).</param>
/// <param name="Existing">Items already in the index (or earlier in the input), which the import skipped.</param>
/// <param name="Transactions">Transactions committed so far.</param>
public readonly record struct ImportProgress(long Read, long Created, long Existing, int Transactions);

/// <summary>What a finished bulk import did.</summary>
/// <param name="Read">Items read from the input.</param>
/// <param name="Created">Items added to the index.</param>
/// <param name="Existing">Items already in the index (or repeated in the input), skipped.</param>
/// <param name="Transactions">Transactions committed.</param>
/// <param name="Elapsed">Wall-clock time of the import.</param>
public sealed record ImportResult(long Read, long Created, long Existing, int Transactions, TimeSpan Elapsed);

/// <summary>Settings of one bulk import.</summary>
public sealed class ImportOptions
{
    /// <summary>The most items one import transaction holds.</summary>
    public const int MaxItemsPerTransaction = 10_000_000;

    /// <summary>
    /// Items per transaction. Each transaction is all or nothing: a crash, a failure or a cancellation loses at most the
    /// transaction in progress, and importing the same input again resumes (what is already in the index is skipped).
    /// Default 100,000; allowed 1 to 10,000,000.
    /// </summary>
    public int ItemsPerTransaction { get; set; } = 100_000;

    /// <summary>Told after each committed transaction; <see langword="null"/> for no reports.</summary>
    public IProgress<ImportProgress>? Progress { get; set; }

    /// <summary>Checks the settings.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="ItemsPerTransaction"/> is out of range.</exception>
    public void Validate()
    {
        if (ItemsPerTransaction is < 1 or > MaxItemsPerTransaction)
        {
            throw new ArgumentOutOfRangeException(nameof(ItemsPerTransaction), ItemsPerTransaction, $"ImportOptions.ItemsPerTransaction is the number of items per import transaction; allowed 1 to {MaxItemsPerTransaction:N0}.");
        }
    }
}
