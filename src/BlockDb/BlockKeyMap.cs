using System.Buffers.Binary;
using System.Globalization;
using BlockDb.Drivers;

namespace BlockDb;

/// <summary>
/// The in-memory key map of the <see cref="BlockLayout.KeyMap"/> layout: one per open database, shared by its
/// sessions. An open-addressing table (linear probing, load at most 0.8) of 8-byte slots, each a 32-bit key of
/// the hash and the 32-bit block ID (0 = empty), placed by the key. It only proposes candidate IDs:
/// every candidate is verified against the <c>Block</c> row before it is returned, so stale entries (from a
/// rolled-back insert) and fingerprint collisions can never return a wrong ID.
/// </summary>
/// <remarks>
/// Completeness: <see cref="LastId"/> is the highest block ID whose rows up to it are all in the map. A lookup
/// that misses reads the rows above it (<see cref="BlockDbSql.BlocksAfter"/>; the first such read is the full
/// load), so blocks committed by other connections or processes are found. Under the write lock that read sees
/// every committed row, which is what makes an insert after a miss safe without a unique index. IDs only grow
/// (BlockDb never deletes blocks); a rolled-back batch moves <see cref="LastId"/> back with <see cref="Rewind"/>.
/// </remarks>
internal sealed class BlockKeyMap
{
    /// <summary>Bytes per slot.</summary>
    public const int SlotBytes = sizeof(ulong);

    /// <summary>The largest hash this map handles on the stack: 64 bytes (SHA-512), as <see cref="BlockHash.MaxLength"/> allows.</summary>
    public const int MaxHashBytes = 66;

    private const double MaxLoad = 0.8;
    private const int MinCapacity = 1024;
    private static readonly ulong Seed = (ulong)Random.Shared.NextInt64() | 1;
    private readonly Lock _gate = new();
    private readonly long _limitBytes;
    private ulong[] _slots = [];
    private long _count;
    private long _lastId;

    public BlockKeyMap(int memoryLimitMegabytes)
    {
        _limitBytes = (long)memoryLimitMegabytes << 20;
        LimitMegabytes = memoryLimitMegabytes;
    }

    public int LimitMegabytes { get; }

    /// <summary>Blocks in the map (entries, including any stale ones).</summary>
    public long Count
    {
        get
        {
            lock (_gate)
            {
                return _count;
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
                return (long)_slots.Length * SlotBytes;
            }
        }
    }

    /// <summary>The highest block ID up to which every row is in the map.</summary>
    public long LastId
    {
        get
        {
            lock (_gate)
            {
                return _lastId;
            }
        }
    }

    /// <summary>
    /// Finds a block: candidates from the map, each verified with <paramref name="getById"/>; when none is
    /// verified and <paramref name="catchUp"/> is set, reads the rows above <see cref="LastId"/> and tries once more.
    /// </summary>
    public long? Find(ReadOnlySpan<byte> hash, long size, ISqliteStatement getById, ISqliteStatement blocksAfter, bool catchUp)
    {
        if (FindVerified(hash, size, getById) is { } id)
        {
            return id;
        }

        return catchUp && CatchUp(blocksAfter) ? FindVerified(hash, size, getById) : null;
    }

    /// <summary>Fails before a write when one more block would take the map above its memory limit.</summary>
    /// <exception cref="BlockDbConfigurationException">The limit would be exceeded.</exception>
    public void EnsureRoomForOne()
    {
        lock (_gate)
        {
            CheckRoomForOneLocked();
        }
    }

    /// <summary>Adds a block this process just inserted (under the write lock, after a lookup that caught up).</summary>
    public void Add(ReadOnlySpan<byte> hash, long id)
    {
        lock (_gate)
        {
            AddLocked(hash, id);
            _lastId = Math.Max(_lastId, id);
        }
    }

    /// <summary>After a rollback: rows above <paramref name="lastId"/> are read again at the next miss.</summary>
    public void Rewind(long lastId)
    {
        lock (_gate)
        {
            _lastId = Math.Min(_lastId, lastId);
        }
    }

    private long? FindVerified(ReadOnlySpan<byte> hash, long size, ISqliteStatement getById)
    {
        Span<long> candidates = stackalloc long[8];
        var start = 0L;
        while (true)
        {
            int found;
            bool more;
            lock (_gate)
            {
                (found, more, start) = Candidates(hash, candidates, start);
            }

            for (var i = 0; i < found; i++)
            {
                if (Verify(candidates[i], hash, size, getById))
                {
                    return candidates[i];
                }
            }

            if (!more)
            {
                return null;
            }
        }
    }

    /// <summary>Collects the IDs whose fingerprint matches, from probe step <paramref name="skip"/> on; <c>more</c> when the buffer filled first.</summary>
    private (int Found, bool More, long Next) Candidates(ReadOnlySpan<byte> hash, Span<long> into, long skip)
    {
        var slots = _slots;
        if (slots.Length == 0)
        {
            return (0, false, 0);
        }

        var key = Key(hash);
        var home = Home(key, slots.Length);
        var found = 0;
        for (var step = skip; step < slots.Length; step++)
        {
            var slot = slots[(home + step) % slots.Length];
            if (slot == 0)
            {
                return (found, false, step);
            }

            if ((uint)(slot >> 32) == key)
            {
                into[found++] = (long)(uint)slot;
                if (found == into.Length)
                {
                    return (found, true, step + 1);
                }
            }
        }

        return (found, false, slots.Length);
    }

    private static bool Verify(long id, ReadOnlySpan<byte> hash, long size, ISqliteStatement getById)
    {
        Span<byte> stored = stackalloc byte[MaxHashBytes];
        getById.BindInt64(1, id);
        try
        {
            if (!getById.Step())
            {
                return false; // a rolled-back insert's ID, or a row this snapshot does not see yet
            }

            var length = getById.ColumnBlob(0, stored);
            return length == hash.Length && stored[..length].SequenceEqual(hash) && getById.ColumnInt64(1) == size;
        }
        finally
        {
            getById.Reset();
        }
    }

    /// <summary>Reads the rows above <see cref="LastId"/> into the map; true when any were read.</summary>
    private bool CatchUp(ISqliteStatement blocksAfter)
    {
        Span<byte> hash = stackalloc byte[MaxHashBytes];
        lock (_gate)
        {
            var added = false;
            blocksAfter.BindInt64(1, _lastId);
            try
            {
                while (blocksAfter.Step())
                {
                    var id = blocksAfter.ColumnInt64(0);
                    var length = blocksAfter.ColumnBlob(1, hash);
                    if (length < 0 || length > hash.Length)
                    {
                        throw new BlockDbFormatException(string.Create(CultureInfo.InvariantCulture, $"Block {id} has a hash of {length} bytes; the KeyMap layout stores 1 to {BlockHash.MaxLength * 3 / 4} bytes."));
                    }

                    CheckRoomForOneLocked();
                    AddLocked(hash[..length], id);
                    _lastId = id;
                    added = true;
                }
            }
            finally
            {
                blocksAfter.Reset();
            }

            return added;
        }
    }

    private void AddLocked(ReadOnlySpan<byte> hash, long id)
    {
        if (id is < 1 or > uint.MaxValue)
        {
            throw new BlockDbException(string.Create(CultureInfo.InvariantCulture, $"Block ID {id} is outside what the KeyMap layout holds (1 to {uint.MaxValue}); use the BlobHash layout for an index of more than 4,294,967,295 blocks."));
        }

        if (MustGrowForOne)
        {
            Resize(NextCapacity(_count + 1));
        }

        var key = Key(hash);
        var home = Home(key, _slots.Length);
        var value = ((ulong)key << 32) | (uint)id;
        for (var step = 0L; ; step++)
        {
            ref var slot = ref _slots[(home + step) % _slots.Length];
            if (slot == value)
            {
                return; // already there (a rewind re-read it)
            }

            if (slot == 0)
            {
                slot = value;
                _count++;
                return;
            }
        }
    }

    private void Resize(long capacity)
    {
        var old = _slots;
        var slots = new ulong[capacity];
        foreach (var slot in old)
        {
            if (slot != 0)
            {
                var home = Home((uint)(slot >> 32), slots.Length);
                var i = home;
                while (slots[i] != 0)
                {
                    i = i + 1 == slots.Length ? 0 : i + 1;
                }

                slots[i] = slot;
            }
        }

        _slots = slots;
    }

    /// <summary>Whether one more entry would pass the maximum load, so the slots must grow first.</summary>
    private bool MustGrowForOne => _count + 1 > (long)(_slots.Length * MaxLoad);

    /// <summary>Fails when the growth one more entry needs would pass the memory limit.</summary>
    private void CheckRoomForOneLocked()
    {
        if (!MustGrowForOne)
        {
            return;
        }

        var bytes = NextCapacity(_count + 1) * SlotBytes;
        if (bytes > _limitBytes)
        {
            throw new BlockDbConfigurationException(
                "BlockDb:Index:KeyMapMemoryLimitMegabytes",
                string.Create(CultureInfo.InvariantCulture, $"The KeyMap layout's key map needs {bytes / 1048576.0:F0} MB for {_count + 1:N0} blocks, above BlockDb:Index:KeyMapMemoryLimitMegabytes = {LimitMegabytes}; raise the limit (about 10–16 MB per million blocks) or use the BlobHash layout. Nothing was written."));
        }
    }

    private static long NextCapacity(long count) => Math.Max(MinCapacity, (long)(count / MaxLoad * 1.5));

    /// <summary>
    /// The 32-bit key of a hash: its first 8 bytes (or a mix of all bytes for hashes under 8 bytes) XOR a
    /// per-process seed, multiplied and folded, so crafted hashes cannot aim at one probe chain. A slot keeps
    /// the key, so a resize can place it again; two different hashes share a key with probability 2^-32.
    /// </summary>
    private static uint Key(ReadOnlySpan<byte> hash)
    {
        var a = hash.Length >= 8 ? BinaryPrimitives.ReadUInt64LittleEndian(hash) : Mix(hash, 0x9E3779B97F4A7C15);
        return (uint)(((a ^ Seed) * 0x9E3779B97F4A7C15) >> 32);
    }

    /// <summary>The home slot of a key: the key mapped onto the capacity by a multiply (no modulo, any capacity).</summary>
    private static long Home(uint key, int capacity) => (long)(((ulong)key * (ulong)capacity) >> 32);

    private static ulong Mix(ReadOnlySpan<byte> bytes, ulong seed)
    {
        var h = seed ^ (ulong)bytes.Length;
        foreach (var x in bytes)
        {
            h = (h ^ x) * 0x100000001B3;
        }

        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCD;
        h ^= h >> 33;
        return h;
    }
}
