namespace BlockDb.Engine;

// The volume calls.
internal sealed partial class BlockSession<TEngine>
{
    public async ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(RegisterVolumeAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.VolumeName(name);
            Require.NewVolumeState(state);
            RequireWritable(nameof(RegisterVolumeAsync));
            var id = await call.WhilePending(_engine.RegisterVolumeAsync(name, state, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return id;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SetVolumeStateAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.VolumeState(state);
            Require.VolumeSize(size);
            RequireWritable(nameof(SetVolumeStateAsync));
            await call.WhilePending(_engine.SetVolumeStateAsync(volumeId, state, size, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(MoveBlocksAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            ArgumentNullException.ThrowIfNull(blockIds);
            RequireWritable(nameof(MoveBlocksAsync));
            var moved = await call.WhilePending(_engine.MoveBlocksAsync(blockIds, toVolumeId, cancellationToken)).ConfigureAwait(false);
            await call.WhilePending(_policy.AfterWriteAsync()).ConfigureAwait(false);
            return moved;
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetVolumeAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            return await call.WhilePending(_engine.GetVolumeAsync(volumeId, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }

    public async ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(FindVolumeAsync));
        try
        {
            await call.EnterAsync(this, cancellationToken).ConfigureAwait(false);
            call.Entered(cancellationToken);
            Require.VolumeName(name);
            return await call.WhilePending(_engine.FindVolumeAsync(name, cancellationToken)).ConfigureAwait(false);
        }
        catch (Exception e) when (call.Failing(e))
        {
            call.Rethrow();
            throw;
        }
    }
}
