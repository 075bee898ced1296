using System.Globalization;
using System.Runtime.CompilerServices;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Layouts.Indexed;
using BlockDb.Volumes;

namespace BlockDb.KeyMap;

/// <summary>How far a <see cref="KeyMapSession"/> lookup goes before it calls a block missing.</summary>
internal enum LookupMode
{
    /// <summary>The shared map only: a hit is certain, a miss is not (select-xor-insert before it takes the write lock).</summary>
    Probe,

    /// <summary>
    /// Complete: the shared map, then (in the write transaction) the session's own inserts, then a catch-up [M2] and the
    /// shared map again; in the write transaction the catch-up runs once, after which a miss is authoritative [M4].
    /// </summary>
    Complete,

    /// <summary><see cref="Complete"/>, also reading the found row's <c>VolumeID</c> (a one-call file's blocks).</summary>
    CompleteWithVolume,
}

/// <summary>
/// The <see cref="BlockLayout.KeyMap"/> layout for one session, from the session's call to the statement step: lookups
/// through the database's shared <see cref="BlockKeyMap"/>, every candidate verified against its row [M1]; inserts after
/// an authoritative miss [M4] at IDs above every ID in the file [F2]; the session's own inserts kept apart until they
/// commit [M3] (<see cref="KeyMapWrites"/>). Invariants: docs/ARCHITECTURE.md, "The key map".
/// </summary>
internal readonly partial struct KeyMapSession : ILayoutSession
{
    private readonly BlockKeyMap _map;
    private readonly KeyMapWrites _own;

    public KeyMapSession(BlockKeyMap map, KeyMapWrites own)
    {
        _map = map;
        _own = own;
    }

    // The members that take a block `in` are explicit: an implicit one gets a compiler bridge (one more frame).
    long? ILayoutSession.Find(in BlockKey block) => Lookup(block, KeyOf(block), LookupMode.Complete, out _);

    SelectXorInsertResult ILayoutSession.SelectXorInsert(in BlockKey block, long? volumeId)
    {
        var key = KeyOf(block);
        var tx = _own.Transaction;
        if (!tx.IsOpen)
        {
            // Outside a write transaction a verified hit needs no write lock [R1]; the first load runs here, not under it.
            tx.Reads.Enter();
            EnsureLoaded();
            if (Lookup(block, key, LookupMode.Probe, out _) is { } known)
            {
                return new SelectXorInsertResult(known, false);
            }
        }

        tx.Begin();
        if (Lookup(block, key, LookupMode.Complete, out _) is { } id)
        {
            return new SelectXorInsertResult(id, false);
        }

        var created = InsertNew(block, key, volumeId);
        tx.Wrote();
        return new SelectXorInsertResult(created, true);
    }

    long? ILayoutSession.FindInWrite(in BlockKey block, out BlockVolume volume)
    {
        _own.Transaction.RequireOpen();
        var id = Lookup(block, KeyOf(block), LookupMode.CompleteWithVolume, out var found);

        // The verification read ran in this write transaction: its VolumeID is the row's now.
        volume = id is null ? BlockVolume.Unknown : BlockVolume.Read(found);
        return id;
    }

    SelectXorInsertResult ILayoutSession.InsertMissingInWrite(in BlockKey block, long? volumeId, out BlockVolume volume)
    {
        _own.Transaction.RequireOpen();

        // The complete lookup that missed it caught the map up in this transaction [M4]: the next ID is free [F2].
        var created = InsertNew(block, KeyOf(block), volumeId);
        _own.Transaction.Wrote();
        volume = BlockVolume.Checked;
        return new SelectXorInsertResult(created, true);
    }

    void ILayoutSession.RequireRoomInWrite(int count)
    {
        // The complete lookup that missed them caught the map up in this transaction [M4]: NextId is the first free ID [F2].
        _own.Transaction.RequireOpen();
        if (count > 0 && _own.NextId + count - 1 > KeyMapLayout.MaxId)
        {
            throw IdsUsedUp();
        }
    }

    public BlockHash ReadBinaryHash(ISqliteStatement statement, int column) => BlobHashCodec.ReadBinary(statement, column);

    private static BlockDbException IdsUsedUp() =>
        new(
            string.Create(CultureInfo.InvariantCulture, $"The KeyMap layout holds block IDs 1 to {KeyMapLayout.MaxId} and this file has used them all (IDs are never reused); convert it to the BlobHash layout. Nothing was written."),
            SqliteResultCode.Full,
            SqliteResultCode.Full,
            null);

    private uint KeyOf(in BlockKey block) => _map.Hasher.KeyOf(block.HashBytes, block.Size);

    /// <summary>The one lookup: the block's verified ID, or null when <paramref name="mode"/> lets it call the block missing.</summary>
    private long? Lookup(in BlockKey block, uint key, LookupMode mode, out long? volumeId)
    {
        if (FindIn(_map.Slots, block, key, mode, out volumeId) is { } id)
        {
            return id;
        }

        var inWrite = _own.Transaction.IsOpen;
        if (inWrite)
        {
            // A bulk import's own rows are in the shared map already [M6].
            if (!_own.Bulk && FindIn(_own.Inserts.Slots, block, key, mode, out volumeId) is { } own)
            {
                return own;
            }

            if (_own.CaughtUp)
            {
                return null; // [M4]
            }
        }

        if (mode == LookupMode.Probe)
        {
            return null;
        }

        var caughtUp = _map.CatchUp(_own.Queries, _own.Transaction.CallCancellation);
        if (inWrite)
        {
            // The first catch-up of this transaction, before any insert of it: the map now holds every committed row [M4].
            _own.CaughtUpAt(caughtUp);
        }

        return FindIn(_map.Slots, block, key, mode, out volumeId);
    }

    /// <summary>The first candidate in <paramref name="slots"/> whose row holds the block's hash and size [M1].</summary>
    private long? FindIn(ulong[] slots, in BlockKey block, uint key, LookupMode mode, out long? volumeId)
    {
        volumeId = null;
        foreach (var id in KeyTable.Candidates(slots, key))
        {
            if (_own.Verify(id, block, mode == LookupMode.CompleteWithVolume, out volumeId))
            {
                return id;
            }
        }

        return null;
    }

    /// <summary>Appends a block the caught-up lookup did not find, at the next ID [F2].</summary>
    private long InsertNew(in BlockKey block, uint key, long? volumeId)
    {
        if (!_own.CaughtUp)
        {
            throw new InvalidOperationException("KeyMap insert without a catch-up in this transaction.");
        }

        var id = _own.NextId;
        if (id > KeyMapLayout.MaxId)
        {
            throw IdsUsedUp();
        }

        _own.Volumes.RequireRecordable(volumeId);
        _own.Insert(block, key, id, volumeId);
        return id;
    }

    private void EnsureLoaded()
    {
        if (!_map.Loaded)
        {
            _map.CatchUp(_own.Queries, _own.Transaction.CallCancellation);
        }
    }
}
