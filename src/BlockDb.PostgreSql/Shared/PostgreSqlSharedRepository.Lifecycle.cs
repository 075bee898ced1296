using BlockDb.Engine;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Collection;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Sessions;
using BlockDb.PostgreSql.Volumes;

namespace BlockDb.PostgreSql.Shared;

/// <summary>The shared repository's lifecycle calls, each on a pooled connection in autocommit, as its other calls.</summary>
internal sealed partial class PostgreSqlSharedRepository
{
    public async ValueTask<long> InsertBlockAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default)
    {
        var key = PgKeys.Block(hash, size);
        _context.RequireWritable(nameof(InsertBlockAsync));
        var (id, _, state) = await RunAsync(nameof(InsertBlockAsync), (c, ct) => PgBlocks.InsertInVolumeAsync(c, null, key, size, volumeId, thenFind: false, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        return Acknowledge(id ?? throw PgVolumes.Unrecordable(volumeId, state) ?? PgContext.BlockExists(hash, size));
    }

    public ValueTask<SelectXorInsertResult> SelectXorInsertAsync(string hash, long size, long volumeId, CancellationToken cancellationToken = default) =>
        SelectXorInsertCoreAsync(PgKeys.Block(hash, size), size, volumeId, cancellationToken);

    public ValueTask<BlockInfo> GetBlockAsync(long blockId, CancellationToken cancellationToken = default) =>
        RunAsync(nameof(GetBlockAsync), (c, ct) => PgBlocks.GetBlockAsync(c, null, blockId, ct), PgAccess.Read, cancellationToken);

    public ValueTask<long?> FindBlocksetAsync(string fullHash, long length, CancellationToken cancellationToken = default)
    {
        Require.FullHash(fullHash, length);
        var hash = Convert.FromBase64String(fullHash);
        return RunAsync(nameof(FindBlocksetAsync), (c, ct) => PgBlocksets.FindBlocksetAsync(c, null, hash, length, ct), PgAccess.Read, cancellationToken);
    }

    public async ValueTask<VolumeInfo> GetVolumeAsync(long volumeId, CancellationToken cancellationToken = default) =>
        await RunAsync(nameof(GetVolumeAsync), (c, ct) => PgVolumes.GetVolumeAsync(c, null, volumeId, null, ct), PgAccess.Read, cancellationToken).ConfigureAwait(false)
            ?? throw new VolumeNotFoundException(volumeId);

    public ValueTask<VolumeInfo?> FindVolumeAsync(string name, CancellationToken cancellationToken = default)
    {
        Require.VolumeName(name);
        return RunAsync(nameof(FindVolumeAsync), (c, ct) => PgVolumes.GetVolumeAsync(c, null, null, name, ct), PgAccess.Read, cancellationToken);
    }

    public async ValueTask DeleteBlocksetAsync(long blocksetId, CancellationToken cancellationToken = default)
    {
        _context.RequireWritable(nameof(DeleteBlocksetAsync));
        if (!await RunAsync(nameof(DeleteBlocksetAsync), (c, ct) => PgBlocksets.DeleteBlocksetAsync(c, null, blocksetId, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false))
        {
            throw new BlocksetNotFoundException(blocksetId);
        }

        Acknowledge(blocksetId);
    }

    public async ValueTask<CollectResult> DeleteUnreferencedBlocksAsync(long? volumeId = null, CancellationToken cancellationToken = default)
    {
        _context.RequireWritable(nameof(DeleteUnreferencedBlocksAsync));
        var result = await RunAsync(nameof(DeleteUnreferencedBlocksAsync), (c, ct) => PgCollection.CollectAsync(c, null, volumeId, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        Acknowledge(result.Blocks);
        return result;
    }

    public async ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary, CancellationToken cancellationToken = default)
    {
        Require.VolumeName(name);
        Require.NewVolumeState(state);
        _context.RequireWritable(nameof(RegisterVolumeAsync));
        var id = await RunAsync(nameof(RegisterVolumeAsync), (c, ct) => PgVolumes.RegisterVolumeAsync(c, null, name, state, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        return Acknowledge(id ?? throw new BlockDbConflictException($"A volume named {Quoted.Value(name)} exists already; volume names are unique."));
    }

    public async ValueTask SetVolumeStateAsync(long volumeId, VolumeState state, long? size = null, CancellationToken cancellationToken = default)
    {
        Require.VolumeState(state);
        Require.VolumeSize(size);
        _context.RequireWritable(nameof(SetVolumeStateAsync));
        await RunAsync(nameof(SetVolumeStateAsync), (c, ct) => PgVolumes.SetVolumeStateAsync(c, null, volumeId, state, size, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        Acknowledge(volumeId);
    }

    public async ValueTask<long> MoveBlocksAsync(IReadOnlyList<long> blockIds, long toVolumeId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blockIds);
        var ids = PgKeys.Ids(blockIds, cancellationToken);
        _context.RequireWritable(nameof(MoveBlocksAsync));
        var (moved, missing) = await RunAsync(nameof(MoveBlocksAsync), (c, ct) => PgVolumes.MoveBlocksAsync(c, null, ids, toVolumeId, ct), PgAccess.Write, cancellationToken).ConfigureAwait(false);
        if (missing is { } position)
        {
            throw new BlockNotFoundException($"Block {position} of the list (ID {ids[position]}) is not in the index; nothing was moved.", position);
        }

        Acknowledge(moved);
        return moved;
    }
}
