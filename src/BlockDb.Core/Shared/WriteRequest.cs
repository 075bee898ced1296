using BlockDb.Engine;

namespace BlockDb.Shared;

/// <summary>The write a <see cref="WriteRequest"/> makes: one per <see cref="IBlockWriter"/> operation.</summary>
internal enum WriteKind : byte
{
    SelectXorInsert,
    SelectXorInsertMany,
    AddBlockset,
    DeleteBlockset,
    Collect,
    RegisterVolume,
    SetVolumeState,
    MoveBlocks,
}

/// <summary>
/// One write of the shared session: its operation (<see cref="Kind"/>) and arguments, run on a session by one
/// <c>switch</c> (<see cref="RunAsync"/>), whichever route carries it (<see cref="IWriteRoute"/>): queued for the
/// group-commit writer, or on a pooled session. Its arguments are checked by the shared session before it is made.
/// </summary>
internal abstract class WriteRequest(WriteKind kind, CancellationToken cancellationToken)
{
    public WriteKind Kind => kind;

    public CancellationToken CancellationToken => cancellationToken;

    /// <summary>A volume's name; a blockset's full hash as text.</summary>
    public string? Text { get; init; }

    /// <summary>A blockset's full hash.</summary>
    public BlockHash Hash { get; init; }

    /// <summary>The block of a select-xor-insert.</summary>
    public BlockKey Block { get; init; }

    /// <summary>The volume a new block is recorded in, or null.</summary>
    public long? VolumeId { get; init; }

    /// <summary>A blockset's or volume's ID; the target volume of a move.</summary>
    public long Id { get; init; }

    public VolumeState State { get; init; }

    /// <summary>A volume's size in bytes, or null.</summary>
    public long? VolumeSize { get; init; }

    /// <summary>The block IDs of <see cref="WriteKind.MoveBlocks"/> (<see cref="IReadOnlyList{Int64}"/>).</summary>
    public object? List { get; init; }

    public ReadOnlyMemory<BlockKey> Blocks { get; init; }

    public Memory<SelectXorInsertResult> Results { get; init; }

    /// <summary>What the write counts as acknowledged writes once it ran on a pooled session (<see cref="PooledWrites"/>): one per new block of a select-xor-insert and per blockset it added, else one per call.</summary>
    public int Writes { get; private set; }

    /// <summary>Runs the write on <paramref name="session"/> and keeps its result; the one place a kind becomes a call.</summary>
    public async ValueTask RunAsync(ISessionHandle session)
    {
        var ct = cancellationToken;
        switch (kind)
        {
            case WriteKind.SelectXorInsert:
                var result = await session.SelectXorInsertAsync(Block, VolumeId, ct).ConfigureAwait(false);
                Done(result, result.Created ? 1 : 0);
                break;
            case WriteKind.SelectXorInsertMany:
                var created = await session.SelectXorInsertManyAsync(Blocks, Results, VolumeId, ct).ConfigureAwait(false);
                Done(created, created);
                break;
            case WriteKind.AddBlockset:
                var blockset = await session.AddBlocksetAsync(Blocks, Results, Hash, VolumeId, ct).ConfigureAwait(false);
                Done(blockset, CreatedIn(Results.Span[..Blocks.Length]) + 1);
                break;
            case WriteKind.DeleteBlockset:
                await session.DeleteBlocksetAsync(Id, ct).ConfigureAwait(false);
                Done(true, 1);
                break;
            case WriteKind.Collect:
                Done(await session.DeleteUnreferencedBlocksAsync(VolumeId, ct).ConfigureAwait(false), 1);
                break;
            case WriteKind.RegisterVolume:
                Done(await session.RegisterVolumeAsync(Text!, State, ct).ConfigureAwait(false), 1);
                break;
            case WriteKind.SetVolumeState:
                await session.SetVolumeStateAsync(Id, State, VolumeSize, ct).ConfigureAwait(false);
                Done(true, 1);
                break;
            case WriteKind.MoveBlocks:
                Done(await session.MoveBlocksAsync((IReadOnlyList<long>)List!, Id, ct).ConfigureAwait(false), 1);
                break;
            default:
                throw new InvalidOperationException($"Unknown write kind {kind}.");
        }
    }

    /// <summary>Completes the caller's task with the result (after the write's commit).</summary>
    public abstract void Complete();

    /// <summary>Fails the caller's task: cancelled when <paramref name="e"/> is its own token's cancellation.</summary>
    public abstract void Fail(Exception e);

    /// <summary>Keeps the result; <paramref name="writes"/> rows written (also set by a route that runs the write itself, PostgreSQL's gathered writes).</summary>
    public void Done<T>(T result, int writes)
    {
        ((WriteRequest<T>)this).Result = result;
        Writes = writes;
    }

    private static int CreatedIn(ReadOnlySpan<SelectXorInsertResult> results)
    {
        var created = 0;
        foreach (var result in results)
        {
            created += result.Created ? 1 : 0;
        }

        return created;
    }
}

/// <summary>A <see cref="WriteRequest"/> whose call returns <typeparamref name="TResult"/> (<see cref="bool"/> for a call that returns nothing).</summary>
internal sealed class WriteRequest<TResult>(WriteKind kind, CancellationToken cancellationToken) : WriteRequest(kind, cancellationToken)
{
    private TaskCompletionSource<TResult>? _completion;

    /// <summary>The result, once <see cref="WriteRequest.RunAsync"/> has run.</summary>
    public TResult? Result { get; set; }

    /// <summary>The caller's task for a queued request, completed by <see cref="Complete"/> or <see cref="Fail"/> (made on first use, before the request is queued).</summary>
    public Task<TResult> Task => (_completion ??= new(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    public override void Complete() => _completion!.TrySetResult(Result!);

    public override void Fail(Exception e)
    {
        if (e is OperationCanceledException && CancellationToken.IsCancellationRequested)
        {
            _completion!.TrySetCanceled(CancellationToken);
        }
        else
        {
            _completion!.TrySetException(e);
        }
    }
}
