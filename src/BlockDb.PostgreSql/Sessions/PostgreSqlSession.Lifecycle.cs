
using BlockDb.Engine;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Volumes;

namespace BlockDb.PostgreSql.Sessions;

/// <summary>The session's lifecycle calls: volumes, blockset deletion, garbage collection, reads by ID.</summary>
internal sealed partial class PostgreSqlSession
{
    public ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default)
    {
        var key = PgInput.Block(hash, size);
        return CallAsync(
            async ct =>
            {
                var (id, _, state) = await WriteAsync(nameof(InsertBlockAsync), (c, t, token) => PgBlocks.InsertInVolumeAsync(c, t, key, size, volumeId, thenFind: false, token), static r => r.Id is not null, ct).ConfigureAwait(false);
                return id ?? throw PgVolumes.Unrecordable(volumeId, state) ?? PgContext.BlockExists(hash, size);
            },
            cancellationToken);
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgInput.Block(hash, size), size, volumeId, cancellationToken);

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default) =>
        CallAsync(ct => RunAsync(nameof(GetBlockAsync), (c, t, token) => PgBlocks.GetBlockAsync(c, t, blockId, token), write: false, retryable: true, ct), cancellationToken);

    public ValueTask<long?> FindBlocksetAsync(string fullHash, long length, CancellationToken cancellationToken = default)
    {
        var hash = PgInput.FullHash(fullHash) ?? throw new ArgumentNullException(nameof(fullHash));
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        return CallAsync(ct => RunAsync(nameof(FindBlocksetAsync), (c, t, token) => PgBlocksets.FindBlocksetAsync(c, t, hash, length, token), write: false, retryable: true, ct), cancellationToken);
    }

    public ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default) =>
        CallAsync(
            async ct => await RunAsync(nameof(GetVolumeAsync), (c, t, token) => PgVolumes.GetVolumeAsync(c, t, volumeId, null, token), write: false, retryable: true, ct).ConfigureAwait(false)
                ?? throw new VolumeNotFoundException(volumeId),
            cancellationToken);

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default)
    {
        Require.VolumeName(name);
        return CallAsync(ct => RunAsync(nameof(FindVolumeAsync), (c, t, token) => PgVolumes.GetVolumeAsync(c, t, null, name, token), write: false, retryable: true, ct), cancellationToken);
    }

    public ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default) =>
        new(CallAsync(
            async ct => await WriteAsync(nameof(DeleteBlocksetAsync), (c, t, token) => PgBlocksets.DeleteBlocksetAsync(c, t, blocksetId, token), static deleted => deleted, ct).ConfigureAwait(false)
                ? true
                : throw new BlocksetNotFoundException(blocksetId),
            cancellationToken).AsTask());

    public ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default) =>
        CallAsync(ct => WriteAsync(nameof(DeleteUnreferencedBlocksAsync), (c, t, token) => PgCollection.CollectAsync(c, t, volumeId, token), static r => r.Blocks > 0, ct), cancellationToken);

    public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default)
    {
        Require.VolumeName(name);
        Require.NewVolumeState(state);
        return CallAsync(
            async ct => await WriteAsync(nameof(RegisterVolumeAsync), (c, t, token) => PgVolumes.RegisterVolumeAsync(c, t, name, state, token), static id => id is not null, ct).ConfigureAwait(false)
                ?? throw new BlockDbConflictException($"A volume named {Quoted.Value(name)} exists already; volume names are unique."),
            cancellationToken);
    }

    public ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default)
    {
        Require.VolumeState(state);
        Require.VolumeSize(size);
        return new(CallAsync(ct => WriteAsync(nameof(SetVolumeStateAsync), (c, t, token) => PgVolumes.SetVolumeStateAsync(c, t, volumeId, state, size, token), static _ => true, ct), cancellationToken).AsTask());
    }

    public ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        return CallAsync(
            async ct =>
            {
                var ids = PgInput.Ids(blockIds, ct);
                var (moved, missing) = await WriteAsync(nameof(MoveBlocksAsync), (c, t, token) => PgVolumes.MoveBlocksAsync(c, t, ids, toVolumeId, token), static r => r.Moved > 0, ct).ConfigureAwait(false);
                return missing is { } position
                    ? throw new BlockNotFoundException($"Block {position} of the list (ID {ids[position]}) is not in the index; nothing was moved.", position)
                    : moved;
            },
            cancellationToken);
    }
}
