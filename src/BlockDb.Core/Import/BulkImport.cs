using System.Diagnostics;
using System.Runtime.CompilerServices;
using BlockDb.Diagnostics;
using BlockDb.Engine;

namespace BlockDb.Import;

/// <summary>
/// The provider-independent part of <see cref="IBlockDatabase.ImportBlocksAsync"/> and
/// <see cref="IBlockDatabase.ImportBlocksetsAsync"/>: reading the input, checking each item, grouping blocks by volume,
/// cutting transactions at <see cref="ImportOptions.ItemsPerTransaction"/> items, counting and reporting progress.
/// </summary>
internal static class BulkImport
{
    private const int GroupSize = 1024;

    /// <summary>Imports blocks into <paramref name="target"/>, which the caller disposes (rolling back what was not committed).</summary>
    /// <param name="target">The provider's import target.</param>
    /// <param name="blocks">The blocks.</param>
    /// <param name="options">The settings (checked here).</param>
    /// <param name="cancellationToken">Checked between blocks.</param>
    /// <returns>What the import did.</returns>
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1.</exception>
    public static async ValueTask<ImportResult> ImportBlocksAsync(IImportTarget target, IAsyncEnumerable<ImportBlock> blocks, ImportOptions options, CancellationToken cancellationToken)
    {
        using var activity = Start(target, blocks, options, "block");
        var clock = Stopwatch.StartNew();
        var group = new BlockKey[Math.Min(GroupSize, options.ItemsPerTransaction)];
        var count = 0;
        long? volume = null;
        var state = new Counts("block");
        await foreach (var block in blocks.WithCancellation(cancellationToken).ConfigureAwait(false))
        {
            if (block.Block.Size < 1)
            {
                throw new ArgumentException($"Block {state.Read} of the import is default(BlockKey), which names no block; make each key with new BlockKey(hash, size) or BlockKey.Parse(base64Hash, size). The transaction in progress was rolled back; {state.Committed} blocks were committed before it.", nameof(blocks));
            }

            if (count == group.Length || (count > 0 && block.VolumeId != volume))
            {
                state.Pending += await target.AddBlocksAsync(group.AsMemory(0, count), volume, cancellationToken).ConfigureAwait(false);
                count = 0;
            }

            volume = block.VolumeId;
            group[count++] = block.Block;
            state.Read++;
            if (++state.InTransaction == options.ItemsPerTransaction)
            {
                state.Pending += await target.AddBlocksAsync(group.AsMemory(0, count), volume, cancellationToken).ConfigureAwait(false);
                count = 0;
                await CommitAsync(target, options, state, cancellationToken).ConfigureAwait(false);
            }
        }

        if (count > 0)
        {
            state.Pending += await target.AddBlocksAsync(group.AsMemory(0, count), volume, cancellationToken).ConfigureAwait(false);
        }

        await CommitAsync(target, options, state, cancellationToken).ConfigureAwait(false);
        return state.Result(clock.Elapsed);
    }

    /// <summary>Imports blocksets into <paramref name="target"/>, which the caller disposes (rolling back what was not committed).</summary>
    /// <param name="target">The provider's import target.</param>
    /// <param name="blocksets">The blocksets.</param>
    /// <param name="options">The settings (checked here).</param>
    /// <param name="cancellationToken">Checked between blocksets.</param>
    /// <returns>What the import did.</returns>
    /// <exception cref="ArgumentException">A block's hash is empty or its size below 1.</exception>
    public static async ValueTask<ImportResult> ImportBlocksetsAsync(IImportTarget target, IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions options, CancellationToken cancellationToken)
    {
        using var activity = Start(target, blocksets, options, "blockset");
        var clock = Stopwatch.StartNew();
        var state = new Counts("blockset");
        await foreach (var blockset in blocksets.WithCancellation(cancellationToken).ConfigureAwait(false))
        {
            if (blockset?.Blocks is null)
            {
                throw new ArgumentNullException(nameof(blocksets), $"Blockset {state.Read} of the import, or its block list, is null; give an empty list for an empty file.");
            }

            long length = 0;
            for (var i = 0; i < blockset.Blocks.Count; i++)
            {
                var block = blockset.Blocks[i];
                if (block.Hash.IsEmpty || block.Size < 1)
                {
                    throw new ArgumentException($"Block {i} of blockset {state.Read} of the import is default(BlockKey), which names no block; make each key with new BlockKey(hash, size) or BlockKey.Parse(base64Hash, size). The transaction in progress was rolled back; {state.Committed} blocksets were committed before it.", nameof(blocksets));
                }

                if (!Require.TryAddLength(ref length, block.Size))
                {
                    throw new ArgumentOutOfRangeException(nameof(blocksets), $"Blockset {state.Read} of the import is longer than {long.MaxValue:N0} bytes at block {i}; a blockset's Length is the sum of its blocks' sizes and must fit a 64-bit integer. The transaction in progress was rolled back; {state.Committed} blocksets were committed before it.");
                }
            }

            state.Pending += await target.AddBlocksetAsync(blockset, length, cancellationToken).ConfigureAwait(false) ? 1 : 0;
            state.Read++;
            if (++state.InTransaction == options.ItemsPerTransaction)
            {
                await CommitAsync(target, options, state, cancellationToken).ConfigureAwait(false);
            }
        }

        await CommitAsync(target, options, state, cancellationToken).ConfigureAwait(false);
        return state.Result(clock.Elapsed);
    }

    /// <summary>Checks the arguments of an import of <paramref name="kind"/> items and starts its activity.</summary>
    /// <exception cref="ArgumentNullException">An argument is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="ImportOptions.ItemsPerTransaction"/> is out of range.</exception>
    private static Activity? Start<TItems>(IImportTarget target, TItems items, ImportOptions options, string kind, [CallerArgumentExpression(nameof(items))] string? itemsName = null)
        where TItems : class
    {
        ArgumentNullException.ThrowIfNull(target);
        ArgumentNullException.ThrowIfNull(items, itemsName);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var activity = Instruments.ActivitySource.StartActivity("blockdb.import");
        activity?.SetTag("blockdb.item", kind);
        return activity;
    }

    /// <summary>Writes what the target held for the transaction, counts it, commits and reports; nothing when the transaction is empty.</summary>
    private static async ValueTask CommitAsync(IImportTarget target, ImportOptions options, Counts state, CancellationToken cancellationToken)
    {
        if (state.InTransaction == 0)
        {
            return;
        }

        state.Pending += await target.FlushAsync(cancellationToken).ConfigureAwait(false);
        state.Created += state.Pending;
        state.Existing += state.InTransaction - state.Pending;
        state.Committed += state.InTransaction;
        (state.Pending, state.InTransaction) = (0, 0);
        state.Transactions++;
        var report = new ImportProgress(state.Read, state.Created, state.Existing, state.Transactions);
        var (created, existing) = (state.Created - state.Reported.Created, state.Existing - state.Reported.Existing);
        await target.CommitAsync(cancellationToken).ConfigureAwait(false);
        state.Reported = (state.Created, state.Existing);
        if (Instruments.ImportItems.Enabled)
        {
            Instruments.ImportItems.Add(created, new("blockdb.item", state.Kind), new("blockdb.result", "created"));
            Instruments.ImportItems.Add(existing, new("blockdb.item", state.Kind), new("blockdb.result", "existing"));
        }

        options.Progress?.Report(report);
    }

    private sealed class Counts(string kind)
    {
        public readonly string Kind = kind;
        public (long Created, long Existing) Reported;
        public long Read;
        public long Created;
        public long Existing;
        public long Committed;
        public long Pending;
        public long InTransaction;
        public int Transactions;

        public ImportResult Result(TimeSpan elapsed) => new(Read, Created, Existing, Transactions, elapsed);
    }
}
