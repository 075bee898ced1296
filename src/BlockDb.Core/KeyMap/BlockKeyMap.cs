using System.Diagnostics;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.KeyMap;

/// <summary>
/// The in-memory key map of the <see cref="BlockLayout.KeyMap"/> layout: one per open database, shared by its
/// sessions. It maps a block's (hash, size) to candidate IDs (<see cref="KeyTable"/>); every candidate is verified
/// against its <c>Block</c> row, so the map can never return a wrong ID. What it must never do is miss a block
/// that is in the file, because an insert after a miss is what keeps the file free of duplicates.
/// </summary>
/// <remarks>
/// Invariants (docs/ARCHITECTURE.md, "The key map"): entries only added, from a snapshot's rows or a
/// committed session's inserts [M3]; (<see cref="CoveredThrough"/>, <see cref="Version"/>) is the coverage [M1];
/// catch-ups one at a time under <c>_load</c>, the table and (W, V) written under <c>_gate</c>, lookups lock-free [M2];
/// a failed load stays failed until <see cref="Reset"/> [M5].
/// Rows whose hash is not 1 to 66 bytes are skipped: no lookup can ask for them (hash texts decode to at most 66
/// bytes), and the guards refuse new ones; <see cref="IBlockDatabase.CheckAsync"/> reports them.
/// </remarks>
internal sealed partial class BlockKeyMap
{
    private readonly Lock _gate = new();
    private readonly Lock _load = new();
    private readonly long _limitBytes;
    private readonly KeyTable _table = new();
    private readonly KeyMapFile? _snapshot;
    private long _coveredThrough;
    private MapVersion _version = MapVersion.Unloaded;

    // Whether _version is not Unloaded, written with it under _gate: a lookup asks on every call, without the lock.
    private volatile bool _loaded;
    private Failure? _failure;
    private bool _snapshotTried;

    // Whether a session of this database committed blocks into the map (Merge): its dispose then waits a little for the
    // write lock to write the snapshot; a map that only read never waits for a writer.
    private bool _wrote;
    private (Guid Token, long CoveredThrough, MapVersion Version, long Count)? _loadedFrom;

    /// <summary>A map whose keys use <paramref name="hasher"/>'s seed (the file's recorded seed when it has one), loading from <paramref name="snapshot"/> when it passes its checks (null: never).</summary>
    public BlockKeyMap(int memoryLimitMegabytes, KeyHasher hasher, KeyMapFile? snapshot = null)
    {
        _limitBytes = (long)memoryLimitMegabytes << 20;
        LimitMegabytes = memoryLimitMegabytes;
        Hasher = hasher;
        _snapshot = snapshot;
    }

    public int LimitMegabytes { get; }

    /// <summary>The keys' seeded hash: fixed for the map's life, so every key a session computes matches the table's.</summary>
    public KeyHasher Hasher { get; }

    /// <summary>Where whole-table loads and failures are reported (set once by the database that owns the map, before any session).</summary>
    public MapLoadReporter? Reporter { get; set; }

    /// <summary>Entries in the map (including stale ones whose rows were deleted).</summary>
    public long Count
    {
        get
        {
            lock (_gate)
            {
                return _table.Count;
            }
        }
    }

    /// <summary>Memory held by the slots, in bytes.</summary>
    public long MemoryBytes
    {
        get
        {
            lock (_gate)
            {
                return _table.Bytes;
            }
        }
    }

    /// <summary>W: every row with an ID up to this is in the map, for snapshots of version <see cref="Version"/>.</summary>
    public long CoveredThrough
    {
        get
        {
            lock (_gate)
            {
                return _coveredThrough;
            }
        }
    }

    /// <summary>V: the file's generation and schema version the map was last loaded at (<see cref="MapVersion.Unloaded"/> before the first load).</summary>
    public MapVersion Version
    {
        get
        {
            lock (_gate)
            {
                return _version;
            }
        }
    }

    /// <summary>Whether a first load has completed (no lock: a stale answer only costs a lookup, never a miss, since the complete lookup catches up [M2]).</summary>
    public bool Loaded => _loaded;

    /// <summary>The table's slots for a lookup, without a lock (<see cref="KeyTable"/>'s reader rule); every candidate must be verified [M1].</summary>
    /// <exception cref="BlockDbException">The map failed to load (see the class remarks).</exception>
    public ulong[] Slots
    {
        get
        {
            ThrowIfFailed();
            return _table.Slots;
        }
    }

    /// <summary>Whether the exact entry (the block's key and ID) is in the map (for the check).</summary>
    public bool Holds(uint key, long id) => KeyTable.Holds(_table.Slots, KeyTable.SlotOf(key, id));

    /// <summary>
    /// Reads the rows above W in the caller's snapshot (the whole table when the file's version moved or the map
    /// was never loaded), adds them, and advances (W, V) where that snapshot allows.
    /// </summary>
    /// <returns>The first ID above every row and above <c>MaxBlockId</c> in that snapshot, and its version.</returns>
    /// <exception cref="BlockDbConfigurationException">The rows need more memory than the limit (the map is then failed).</exception>
    /// <exception cref="BlockDbFormatException">A row the layout cannot hold, or changed guards (the map is then failed).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled while the first load read the snapshot (the map is unchanged; the next load tries the snapshot again).</exception>
    public CatchUpResult CatchUp(KeyMapQueries statements, CancellationToken cancellationToken)
    {
        lock (_load)
        {
            ThrowIfFailed();
            long after;
            MapVersion version;
            lock (_gate)
            {
                (after, version) = (_coveredThrough, _version);
            }

            var started = Stopwatch.GetTimestamp();
            using var activity = version == MapVersion.Unloaded ? Instruments.ActivitySource.StartActivity("blockdb.keymap.load") : null;
            var fromSnapshot = version == MapVersion.Unloaded && TryLoadSnapshot(statements, activity, out after, out version, cancellationToken);
            var pass = version == MapVersion.Unloaded
                ? KeyMapPass.ReadAll(this, statements)
                : KeyMapPass.ReadAbove(this, statements.CatchUp, after, version) ?? ReadAll(statements);
            fromSnapshot &= !pass.Full;
            activity?.SetTag("blockdb.keymap.source", fromSnapshot ? "snapshot" : "scan");
            lock (_gate)
            {
                if (pass.Full ? pass.Version.IsNewerThan(_version) : pass.Version == _version)
                {
                    _version = pass.Version;
                    _loaded = _version != MapVersion.Unloaded;
                    _coveredThrough = pass.Full ? pass.MaxBlockId : Math.Max(_coveredThrough, pass.MaxBlockId);
                }
            }

            if (pass.Full || fromSnapshot)
            {
                Reporter?.Loaded(Count, MemoryBytes, Stopwatch.GetElapsedTime(started), fromSnapshot);
            }

            // Above every row: those above W were read; those at or below W are at most W.
            var highest = Math.Max(pass.MaxBlockId, Math.Max(pass.LastId, pass.Full ? 0 : after));
            return new CatchUpResult(highest + 1, pass.Version);
        }
    }

    /// <summary>A whole-table read (a reload after the file's version moved), traced as <c>blockdb.keymap.load</c>.</summary>
    private KeyMapPass ReadAll(KeyMapQueries statements)
    {
        using var activity = Instruments.ActivitySource.StartActivity("blockdb.keymap.load");
        activity?.SetTag("blockdb.keymap.source", "scan");
        return KeyMapPass.ReadAll(this, statements);
    }

    /// <summary>
    /// After a session's commit: adds its inserts (its own table; a bulk import's are in the map already,
    /// <see cref="AddUncommitted"/>) and advances W to <paramref name="committedMaxId"/> when the map is still at the
    /// version that session caught up at, and V to <paramref name="versionCommitted"/> (the same version, or the one a
    /// bulk import's own guard DDL moved it to [M6]). Never throws: the rows are committed, and when they cannot be added
    /// here a later catch-up reads them.
    /// </summary>
    public void Merge(KeyTable inserts, long committedMaxId, MapVersion versionSeen, MapVersion versionCommitted)
    {
        lock (_gate)
        {
            _wrote |= committedMaxId > 0;
            if (_failure is not null || !TryReserveLocked(inserts.Count))
            {
                return;
            }

            foreach (var slot in inserts.Slots)
            {
                if (slot != 0)
                {
                    _table.Add(slot);
                }
            }

            if (_version == versionSeen)
            {
                _coveredThrough = Math.Max(_coveredThrough, committedMaxId);
                _version = versionCommitted;
            }
        }
    }

    /// <summary>Forgets the version and any failure, so the next catch-up reads the whole table (after a repair).</summary>
    public void Reset()
    {
        lock (_load)
        {
            lock (_gate)
            {
                _version = MapVersion.Unloaded;
                _loaded = false;
                _coveredThrough = 0;
                _failure = null;
                _loadedFrom = null;
            }
        }
    }

    /// <summary>Adds a chunk of slots read from the file, reserving room only for the entries the map does not hold yet (a reload re-reads mostly known rows).</summary>
    /// <exception cref="BlockDbConfigurationException">They would take the map above its memory limit (the map is then failed).</exception>
    public void AddChunk(ulong[] chunk, int count)
    {
        lock (_gate)
        {
            var added = count;
            if (!_table.HasRoomFor(count))
            {
                // Only growing needs the exact number of new entries (a reload re-reads mostly known rows); when the whole
                // chunk fits, Add's own probe skips the known ones, so each row costs one probe, not two.
                var slots = _table.Slots;
                added = 0;
                for (var i = 0; i < count; i++)
                {
                    if (!KeyTable.Holds(slots, chunk[i]))
                    {
                        chunk[added++] = chunk[i];
                    }
                }

                if (!TryReserveLocked(added))
                {
                    throw Fail(memoryLimit: true, LimitError(_table.Count + added).Message);
                }
            }

            for (var i = 0; i < added; i++)
            {
                _table.Add(chunk[i]);
            }
        }
    }
}
