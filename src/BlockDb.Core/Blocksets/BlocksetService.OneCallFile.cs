using System.Buffers;
using BlockDb.Engine;
using BlockDb.Volumes;

namespace BlockDb.Blocksets;

internal sealed partial class BlocksetService
{
    // A one-call file's first positions of its missing keys, compared by key (reused; used inside the gate only):
    // positions, not keys, so a file of a million new blocks holds 16 bytes a block here, not a copy of each key.
    private HashSet<int>? _missing;
    private readonly SameKey _sameKey = new();

    /// <summary>A one-call file's arguments, carried by value through the batch (<see cref="SelectXorInsertAdd"/>).</summary>
    private readonly record struct OneCallFile(
        BlocksetService Self, ReadOnlyMemory<BlockKey> Blocks, Memory<SelectXorInsertResult> Results, long? VolumeId, string? FullHash, CancellationToken CancellationToken)
    {
        /// <summary>
        /// The whole call inside the write transaction: every block looked up and every check made first, the layout's
        /// rules included (nothing written: a refusal or a cancellation leaves nothing to undo), then the writes
        /// (<see cref="Write"/>), with no savepoint (<see cref="Sqlite.SqliteTransaction.WholeOrBatch"/>): a savepoint's
        /// writes make SQLite copy every page they first touch into its statement journal, one random index page per new
        /// block. Only Duplicati's layout can still refuse among its writes, and only before the new blocks' volume is
        /// found fit in the transaction (a missing block it takes back from <c>DeletedBlock</c> needs no volume, so it
        /// checks the volume as it inserts): that call's writes take a savepoint (<see cref="Sqlite.SqliteTransaction.AllOrNothing"/>).
        /// Returns the blockset's ID; the caller counts the write.
        /// </summary>
        public long Run()
        {
            var count = Blocks.Length;
            var ids = ArrayPool<long>.Shared.Rent(count);
            var volumes = ArrayPool<BlockVolume>.Shared.Rent(count);
            try
            {
                var (length, mayRefuse) = Check(ids, volumes);
                var writes = (File: this, Ids: ids, Volumes: volumes, Length: length);
                return mayRefuse
                    ? Self._batch.AllOrNothing(writes, static w => w.File.Write(w.Ids, w.Volumes, w.Length))
                    : Self._batch.WholeOrBatch(writes, static w => w.File.Write(w.Ids, w.Volumes, w.Length));
            }
            finally
            {
                ArrayPool<long>.Shared.Return(ids);
                ArrayPool<BlockVolume>.Shared.Return(volumes);
            }
        }

        /// <summary>
        /// Looks every block up in this transaction, writing nothing: a found block's ID into <paramref name="ids"/> and
        /// its result (not created), its volume refused when going; a missing one 0 at its first position and
        /// −(first position + 1) at a repeat (the writes insert it once). Refuses, before any write, the new blocks'
        /// volume when it cannot take them, and what the layout's rules refuse (<see cref="IBlocksetRules.Prepare"/>).
        /// Returns the blockset's length, and whether the writes may still refuse: a layout with rules, which may take a
        /// missing block back instead of inserting it, checks the volume as it inserts, unless it was found fit already.
        /// </summary>
        /// <remarks>
        /// The blocks the layout finds together (<see cref="Layouts.ILayoutSession.FindStoredInWrite"/>: KeyMap verifies
        /// its map hits many to a read) are found first, the rest one by one (<see cref="Layouts.ILayoutSession.FindInWrite"/>).
        /// Nothing else writes under the write lock, so a block missing here is still missing when the writes begin.
        /// </remarks>
        private (long Length, bool MayRefuse) Check(long[] ids, BlockVolume[] volumes)
        {
            var keys = Blocks.Span;
            var found = Results.Span;
            Array.Clear(ids, 0, keys.Length);
            Self._layout.FindStoredInWrite(keys, ids.AsSpan(0, keys.Length), volumes.AsSpan(0, keys.Length));
            long length = 0;
            long? fit = null;
            var (missing, firstMissing, distinct) = (0, 0, 0);
            try
            {
                for (var i = 0; i < keys.Length; i++)
                {
                    Require.NotCancelled(i, CancellationToken);

                    // The block matched (hash, size) in this transaction, or will be inserted with them: its size is the key's.
                    length = Require.BlocksetLength(length, keys[i].Size, i);
                    if (ids[i] == 0)
                    {
                        if (Self._layout.FindInWrite(keys[i], out volumes[i]) is not { } id)
                        {
                            firstMissing = missing == 0 ? i : firstMissing;
                            ids[i] = Self.FirstMissing(Blocks, i, missing++, firstMissing);
                            distinct += ids[i] == 0 ? 1 : 0;
                            continue;
                        }

                        ids[i] = id;
                    }

                    found[i] = new SelectXorInsertResult(ids[i], false);
                    Self.RequireReferable(ids[i], i, volumes[i], ref fit);
                }
            }
            finally
            {
                Self.ForgetMissing(missing);
            }

            // The keys match these IDs by (hash, size) in this transaction, or will be inserted with them: the layout's
            // rules take them as the rows' own.
            Self._rules?.Prepare(ids, keys, keys.Length, length, FullHash);
            if (missing == 0)
            {
                return (length, false);
            }

            // The layout's ID limit (KeyMap's) is a refusal too: met among the writes it would roll the batch back.
            Self._layout.RequireRoomInWrite(distinct);
            if (Self._rules is null)
            {
                Self._volumes.RequireRecordable(VolumeId);
                return (length, false);
            }

            return (length, VolumeId is not { } volume || !Self._volumes.IsRecordable(volume));
        }

        /// <summary>
        /// The writes, after <see cref="Check"/>: each missing block inserted once (a repeat takes the first's ID, not
        /// created, as its own select-xor-insert would have found it), then the blockset's rows. The token is not checked
        /// here: once the writes begin, the call completes.
        /// </summary>
        private long Write(long[] ids, BlockVolume[] volumes, long length)
        {
            var keys = Blocks.Span;
            var results = Results.Span;
            long? fit = null;
            for (var i = 0; i < keys.Length; i++)
            {
                var id = ids[i];
                if (id > 0)
                {
                    continue;
                }

                var result = id == 0
                    ? Self._layout.InsertMissingInWrite(keys[i], VolumeId, out volumes[i])
                    : new SelectXorInsertResult(ids[(int)(-id - 1)], false);
                results[i] = result;
                ids[i] = result.Id;
                if (id == 0)
                {
                    // A block a layout took back rather than created: its row read again (only such a layout has rules).
                    Self.RequireReferable(result.Id, i, volumes[i], ref fit);
                }
            }

            return Self.WriteRows(ids, keys.Length, length, FullHash, CancellationToken.None);
        }
    }

    /// <summary>
    /// For a block missing at <paramref name="position"/>, after <paramref name="missingBefore"/> others, the first at
    /// <paramref name="firstMissing"/>: 0 when it is the first missing block of its key in the call, else −(the first
    /// one's position + 1).
    /// </summary>
    private long FirstMissing(ReadOnlyMemory<BlockKey> keys, int position, int missingBefore, int firstMissing)
    {
        if (missingBefore == 0)
        {
            // The common file: nothing missing before, nothing to remember until a second miss.
            return 0;
        }

        var missing = _missing ??= new HashSet<int>(_sameKey);
        if (missingBefore == 1)
        {
            missing.Clear();
            _sameKey.Keys = keys;
            missing.Add(firstMissing);
        }

        if (missing.TryGetValue(position, out var first))
        {
            return -(first + 1);
        }

        missing.Add(position);
        return 0;
    }

    /// <summary>After a call's lookups: lets go of the caller's keys, and drops a large set (its <c>Clear</c> would cost its capacity on every later call).</summary>
    private void ForgetMissing(int missing)
    {
        _sameKey.Keys = default;
        if (missing > 4096)
        {
            _missing = null;
        }
    }

    /// <summary>Positions in one call's keys, equal when their keys are.</summary>
    private sealed class SameKey : IEqualityComparer<int>
    {
        public ReadOnlyMemory<BlockKey> Keys { get; set; }

        public bool Equals(int x, int y) => Keys.Span[x].Equals(Keys.Span[y]);

        public int GetHashCode(int obj) => Keys.Span[obj].GetHashCode();
    }
}
