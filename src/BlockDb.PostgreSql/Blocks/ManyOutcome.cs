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

    /// <summary>The writes of the call, as a commit batch counts them: one per new block, one for a blockset written.</summary>
    public int Writes => (Created?.Count ?? 0) + (Blockset?.Id is not null ? 1 : 0);

    /// <summary>
    /// Puts each block's result at its index (a block listed twice is created at its first place only) and returns how
    /// many were created; throws for the first block without an ID: the named volume's refusal
    /// (<see cref="VolumeNotFoundException"/>, <see cref="BlockDbConflictException"/>) with the results before it filled,
    /// as one call per block would leave them.
    /// </summary>
    public int Fill(Span<SelectXorInsertResult> results, long? volumeId, byte[][] hashes, long[] sizes)
    {
        var claimed = Created is { Count: > 0 } ? new HashSet<long>() : null;
        var created = 0;
        for (var i = 0; i < Ids.Length; i++)
        {
            if (Ids[i] is not { } id)
            {
                var state = VolumeText is null || volumeId is null ? (VolumeState?)null : VolumeRules.Parse(VolumeText, volumeId.Value);
                throw (volumeId is { } volume ? PgVolumes.Unrecordable(volume, state) : null)
                    ?? new BlockDbException($"Block {i} (hash {Convert.ToBase64String(hashes[i])}, size {sizes[i]}) was neither inserted nor found; was it deleted meanwhile?");
            }

            var isNew = claimed is not null && Created!.Contains(id) && claimed.Add(id);
            results[i] = new SelectXorInsertResult(id, isNew);
            created += isNew ? 1 : 0;
        }

        return created;
    }
}
