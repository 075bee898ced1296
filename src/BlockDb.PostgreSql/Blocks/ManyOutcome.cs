using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Volumes;

namespace BlockDb.PostgreSql.Blocks;

/// <summary>What a call over many blocks found and did (<see cref="PgBlocks.FindManyAsync"/>, <see cref="PgBlocks.InsertManyAsync"/>).</summary>
/// <param name="Ids">Each block's ID in input order; null: not in the index (a volume refused it, or it was deleted meanwhile).</param>
/// <param name="Created">The IDs this call inserted (null: it only looked).</param>
/// <param name="VolumeText">The named volume's state as the server spells it (null: none named, or no such volume).</param>
/// <param name="Blockset">What the blockset statement did, when there was one.</param>
internal sealed record ManyOutcome(long?[] Ids, HashSet<long>? Created, string? VolumeText, BlocksetAdded? Blockset)
{
    /// <summary>Whether every block has an ID.</summary>
    public bool AllFound => Array.TrueForAll(Ids, static id => id is not null);

    /// <summary>The named volume's refusal of new blocks (<see cref="VolumeNotFoundException"/>, <see cref="BlockDbConflictException"/>), or null when none is named or it can receive blocks.</summary>
    public Exception? VolumeRefusal(long? volumeId) =>
        volumeId is { } volume ? PgVolumes.Unrecordable(volume, VolumeText is null ? null : VolumeRules.Parse(VolumeText, volume)) : null;

    /// <summary>The writes of the call, as a commit batch counts them: one per new block, one for a blockset written.</summary>
    public int Writes => (Created?.Count ?? 0) + (Blockset?.Id is not null ? 1 : 0);

    /// <summary>
    /// Puts each block's result at its index (a block listed twice is created at its first place only) and returns how
    /// many were created; throws for the first block without an ID: the named volume's refusal
    /// (<see cref="VolumeNotFoundException"/>, <see cref="BlockDbConflictException"/>) with the results before it filled,
    /// as one call per block would leave them. <paramref name="outcomeUnknown"/>: as in the gathered form below.
    /// </summary>
    public int Fill(Span<SelectXorInsertResult> results, long? volumeId, byte[][] hashes, long[] sizes, bool outcomeUnknown = false) =>
        Fill(Ids, Created, Created is { Count: > 0 } || outcomeUnknown ? [] : null, VolumeText, results, volumeId, hashes, sizes, 0, outcomeUnknown);

    /// <summary>
    /// <see cref="Fill(Span{SelectXorInsertResult}, long?, byte[][], long[], bool)"/> for the rows <paramref name="ids"/> of a
    /// call that start at <paramref name="offset"/> in <paramref name="hashes"/> and <paramref name="sizes"/> (a gathered
    /// batch, [S4]): a row is created when its ID is in <paramref name="created"/> and not yet in <paramref name="claimed"/>
    /// (shared by the calls of one batch, in queue order); null <paramref name="claimed"/>: this call created nothing.
    /// <paramref name="outcomeUnknown"/>: the call is sent again after a lost connection, whose batch may have committed
    /// and created blocks this send only finds; each block not claimed before it in this batch is then reported created,
    /// so its caller uploads it (at worst a block is uploaded twice; never one that no one uploads).
    /// </summary>
    public static int Fill(
        ReadOnlySpan<long?> ids, HashSet<long>? created, HashSet<long>? claimed, string? volumeText, Span<SelectXorInsertResult> results, long? volumeId, byte[][] hashes, long[] sizes, int offset, bool outcomeUnknown = false)
    {
        var count = 0;
        for (var i = 0; i < ids.Length; i++)
        {
            if (ids[i] is not { } id)
            {
                var state = volumeText is null || volumeId is null ? (VolumeState?)null : VolumeRules.Parse(volumeText, volumeId.Value);
                throw (volumeId is { } volume ? PgVolumes.Unrecordable(volume, state) : null)
                    ?? new BlockDbException($"Block {i} (hash {Convert.ToBase64String(hashes[offset + i])}, size {sizes[offset + i]}) was neither inserted nor found; was it deleted meanwhile?");
            }

            var isNew = claimed is not null && (outcomeUnknown || (created is not null && created.Contains(id))) && claimed.Add(id);
            results[i] = new SelectXorInsertResult(id, isNew);
            count += isNew ? 1 : 0;
        }

        return count;
    }
}
