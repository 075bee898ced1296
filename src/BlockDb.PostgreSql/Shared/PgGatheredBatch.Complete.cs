using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Shared;
using BlockDb.Volumes;

namespace BlockDb.PostgreSql.Shared;

/// <summary>Completing a committed batch: each request gets its own results or its own refusal ([S4]).</summary>
internal sealed partial class PgGatheredBatch
{
    /// <summary>
    /// After <see cref="ExecuteAsync"/> returned (the batch committed): gives each request its own results, or its own
    /// refusal, and completes or fails it; returns the writes acknowledged. See the remarks for the order.
    /// </summary>
    public int Complete(Outcome outcome)
    {
        var claimed = new HashSet<long>();
        var acknowledged = 0;
        foreach (var entry in _entries)
        {
            if (!Refused(entry, outcome))
            {
                acknowledged += Complete(entry, outcome, claimed);
            }
        }

        foreach (var entry in _entries)
        {
            if (Refused(entry, outcome))
            {
                acknowledged += Complete(entry, outcome, null);
            }
        }

        Clear();
        return acknowledged;
    }

    /// <summary>Whether the request's volume refuses blocks (its rows inserted nothing).</summary>
    private static bool Refused(Entry entry, Outcome outcome) =>
        entry.Request.VolumeId is { } volume && entry.Count > 0
        && PgVolumes.Unrecordable(volume, outcome.States[entry.Offset] is { } state ? VolumeRules.Parse(state, volume) : null) is not null;

    private static int Complete(Entry entry, Outcome outcome, HashSet<long>? claimed)
    {
        var request = entry.Request;
        try
        {
            var ids = outcome.Ids.AsSpan(entry.Offset, entry.Count);
            var state = entry.Count > 0 ? outcome.States[entry.Offset] : null;
            switch (request.Kind)
            {
                case WriteKind.SelectXorInsert:
                    var one = new SelectXorInsertResult[1];
                    var created = ManyOutcome.Fill(ids, outcome.Created, claimed, state, one, request.VolumeId, outcome.Hashes, outcome.Sizes, entry.Offset, entry.Resent);
                    request.Done(one[0], created);
                    break;
                case WriteKind.SelectXorInsertMany:
                    var many = ManyOutcome.Fill(ids, outcome.Created, claimed, state, request.Results.Span, request.VolumeId, outcome.Hashes, outcome.Sizes, entry.Offset, entry.Resent);
                    request.Done(many, many);
                    break;
                default:
                    var added = outcome.Blocksets[entry.Blockset!.Value - 1];
                    var offset = entry.Offset;
                    Exception Refusal() => PgKeys.Refused(added, i => $"hash {Convert.ToBase64String(outcome.Hashes[offset + i])}, size {outcome.Sizes[offset + i]}");
                    if (added.Id is null && claimed is not null)
                    {
                        // Refused by the server: the insert skipped its new blocks, so it claims none (a later request
                        // of the batch that names one created it, and uploads it) and its call wrote nothing.
                        throw Refusal();
                    }

                    var blocks = ManyOutcome.Fill(ids, outcome.Created, claimed, state, request.Results.Span, request.VolumeId, outcome.Hashes, outcome.Sizes, entry.Offset, entry.Resent);
                    request.Done(added.Id ?? throw Refusal(), blocks + 1);
                    break;
            }

            request.Complete();
            return request.Writes;
        }
        catch (Exception e)
        {
            request.Fail(e);
            return 0;
        }
    }
}
