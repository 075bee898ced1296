
namespace BlockDb.Engine;

// The volume calls.
internal sealed partial class BlockSession<TEngine>
{
    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(RegisterVolumeAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.VolumeName(name);
            Require.NewVolumeState(state);
            RequireWritable(nameof(RegisterVolumeAsync));
            var id = _engine.RegisterVolume(name, state);
            _policy.AfterWrite();
            return new(id);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(SetVolumeStateAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.VolumeState(state);
            Require.VolumeSize(size);
            RequireWritable(nameof(SetVolumeStateAsync));
            _engine.SetVolumeState(volumeId, state, size);
            _policy.AfterWrite();
            return ValueTask.CompletedTask;
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed();
        }
    }

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(MoveBlocksAsync));
        try
        {
            call.Enter(this, cancellationToken);
            ArgumentNullException.ThrowIfNull(blockIds);
            RequireWritable(nameof(MoveBlocksAsync));
            var moved = _engine.MoveBlocks(blockIds, toVolumeId, cancellationToken);
            _policy.AfterWrite();
            return new(moved);
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<long>();
        }
    }

    public ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(GetVolumeAsync));
        try
        {
            call.Enter(this, cancellationToken);
            return new(_engine.GetVolume(volumeId));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<VolumeInfo>();
        }
    }

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default)
    {
        using var call = new CallScope(_site, nameof(FindVolumeAsync));
        try
        {
            call.Enter(this, cancellationToken);
            Require.VolumeName(name);
            return new(_engine.FindVolume(name));
        }
        catch (Exception e) when (call.Failing(e))
        {
            return call.Failed<VolumeInfo?>();
        }
    }
}
