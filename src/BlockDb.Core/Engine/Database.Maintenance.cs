using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Import;

namespace BlockDb.Engine;

/// <summary>The check, the repair and the bulk import, for every engine: refusals, span, log event and registration here, the work in the engine.</summary>
internal abstract partial class Database
{
    public ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            ThrowIfDisposed();
            return _maintenance.Run(
                this,
                async token =>
                {
                    using var activity = Instruments.StartActivity("blockdb.check", Tags);
                    var started = Stopwatch.GetTimestamp();
                    var result = await CheckCoreAsync(token).ConfigureAwait(false);
                    activity?.SetTag("blockdb.check.clean", result.IsClean);
                    Log.CheckFinished(Logger, DataSource, result.IsClean, (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                    return result;
                },
                cancellationToken);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<BlockDbCheckResult>(e);
        }
    }

    public ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            ThrowIfDisposed();
            RefuseOwnCommits(nameof(RepairAsync), "it commits a write transaction of its own");
            RefuseRepair();
            if (ReadOnly)
            {
                throw ReadOnlyRefusal(nameof(RepairAsync));
            }

            return _maintenance.Run(
                this,
                async token =>
                {
                    using var activity = Instruments.StartActivity("blockdb.repair", Tags);
                    var result = await RepairCoreAsync(token).ConfigureAwait(false);
                    Log.RepairFinished(Logger, DataSource, result.MergedGroups, result.DeletedBlocks, result.RepointedEntries, result.RenumberedBlocks);
                    return result;
                },
                cancellationToken);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<BlockDbRepairResult>(e);
        }
    }

    /// <summary>Runs every check in one snapshot, on a connection of the engine's own, off the caller's thread.</summary>
    protected abstract ValueTask<BlockDbCheckResult> CheckCoreAsync(CancellationToken cancellationToken);

    /// <summary>Repairs (the front end has refused a read-only database already), then checks; off the caller's thread.</summary>
    protected abstract ValueTask<BlockDbRepairResult> RepairCoreAsync(CancellationToken cancellationToken);

    /// <summary>Refuses a repair the engine or the layout cannot make (SQLite: a layout that refuses repairs); nothing by default.</summary>
    protected virtual void RefuseRepair()
    {
    }

    public ValueTask<ImportResult> ImportBlocksAsync(IAsyncEnumerable<ImportBlock> blocks, ImportOptions? options = null, CancellationToken cancellationToken = default) =>
        ImportAsync(blocks, nameof(ImportBlocksAsync), "blocks", options, BulkImport.ImportBlocksAsync, cancellationToken);

    public ValueTask<ImportResult> ImportBlocksetsAsync(IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions? options = null, CancellationToken cancellationToken = default) =>
        ImportAsync(blocksets, nameof(ImportBlocksetsAsync), "blocksets", options, BulkImport.ImportBlocksetsAsync, cancellationToken);

    /// <summary>One bulk import on a target of its own, registered while it runs (the dispose ends it), logged when it ends.</summary>
    /// <param name="items">The input, read once.</param>
    /// <param name="operation">The public call, for messages.</param>
    /// <param name="kind">What is imported (<c>blocks</c>, <c>blocksets</c>): the public call's parameter name and the log's word.</param>
    /// <param name="options">Transaction size and progress; null for the defaults.</param>
    /// <param name="import">The <see cref="BulkImport"/> loop for the kind.</param>
    /// <param name="cancellationToken">Checked between items.</param>
    private async ValueTask<ImportResult> ImportAsync<T>(
        IAsyncEnumerable<T> items,
        string operation,
        string kind,
        ImportOptions? options,
        Func<IImportTarget, IAsyncEnumerable<T>, ImportOptions, CancellationToken, ValueTask<ImportResult>> import,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(items, kind);
        var target = await OpenImportAsync(operation, options, cancellationToken).ConfigureAwait(false);
        try
        {
            var result = await import(target, items, options ?? new ImportOptions(), cancellationToken).ConfigureAwait(false);
            Log.ImportFinished(Logger, kind, DataSource, result.Read, result.Created, result.Existing, result.Transactions, (long)result.Elapsed.TotalMilliseconds);
            return result;
        }
        finally
        {
            await CloseImportAsync(target).ConfigureAwait(false);
        }
    }

    /// <summary>Opens this engine's bulk import target (its own connection and transactions).</summary>
    /// <param name="operation">The public call, for messages.</param>
    /// <param name="cancellationToken">Cancels the open.</param>
    protected abstract ValueTask<IImportTarget> OpenImportTargetAsync(string operation, CancellationToken cancellationToken);

    private async ValueTask<IImportTarget> OpenImportAsync(string operation, ImportOptions? options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        RefuseOwnCommits(operation, "it commits in batches of its own");
        options?.Validate();
        if (ReadOnly)
        {
            throw ReadOnlyRefusal(operation);
        }

        var target = await OpenImportTargetAsync(operation, cancellationToken).ConfigureAwait(false);
        _imports.TryAdd(target, 0);
        if (_disposal.Begun)
        {
            await CloseImportAsync(target).ConfigureAwait(false);
            throw Disposed("the import was opening");
        }

        return target;
    }

    private ValueTask CloseImportAsync(IImportTarget target)
    {
        _imports.TryRemove(target, out _);
        return target.DisposeAsync();
    }

    /// <summary>
    /// Cancels and waits for running checks and repairs, ends the open enumerations, disposes the shared sessions
    /// (their queued writes commit first, their reads in flight finish), the imports (rolled back where not committed)
    /// and the sessions still open (each waits for a call in flight, then commits or rolls back as
    /// <see cref="BatchingOptions.OnDispose"/> says); then the engine releases its file or data source.
    /// </summary>
    /// <exception cref="AggregateException">Ending a session's batch failed (its connection is closed all the same), on every engine.</exception>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <inheritdoc cref="Dispose"/>
    /// <remarks>A second dispose, concurrent or later, waits for the first one's work and returns without its exception.</remarks>
    public ValueTask DisposeAsync() => _disposal.RunAsync(DisposeCoreAsync);

    private async ValueTask DisposeCoreAsync()
    {
        Instruments.Unregister(this);
        await _rows.DisposeAsync().ConfigureAwait(false);
        await _maintenance.CloseAsync().ConfigureAwait(false);
        var errors = new List<Exception>();
        await CloseEnumerationsAsync(errors).ConfigureAwait(false);
        await DisposeEachAsync(_shared.Keys, errors).ConfigureAwait(false);
        await DisposeEachAsync(_imports.Keys, errors).ConfigureAwait(false);

        // A session whose final commit failed is reported once every session is closed, on every engine [G4].
        await DisposeEachAsync(_sessions.Keys, errors).ConfigureAwait(false);
        await CloseEngineAsync().ConfigureAwait(false);
        if (errors.Count > 0)
        {
            throw new AggregateException("Disposing the open BlockDb sessions failed.", errors);
        }
    }

    /// <summary>Ends the open enumerations (first: they hold connections of their own); a failure goes to <paramref name="errors"/>.</summary>
    protected abstract ValueTask CloseEnumerationsAsync(List<Exception> errors);

    /// <summary>Releases the file or the data source, once every session is closed.</summary>
    protected abstract ValueTask CloseEngineAsync();

    /// <summary>Disposes each of <paramref name="open"/>, collecting the failures.</summary>
    protected static async ValueTask DisposeEachAsync(IEnumerable<IAsyncDisposable> open, List<Exception> errors)
    {
        foreach (var disposable in open)
        {
            try
            {
                await disposable.DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception e)
            {
                errors.Add(e);
            }
        }
    }
}
