namespace BlockDb.KeyMap;

/// <summary>
/// An open-addressing table of 8-byte slots (linear probing, load at most <see cref="MaxLoad"/>): the high 32 bits
/// of a slot are a key of the block's hash and size, the low 32 bits its block ID (1 to 4,294,967,295); 0 is an
/// empty slot. It only proposes IDs: the session (<see cref="KeyMapSession"/>) checks every candidate against its <c>Block</c>
/// row, so an entry whose row was deleted or rolled back, or two blocks sharing a key, never give a wrong ID.
/// </summary>
/// <remarks>
/// Invariants: entries are never removed or moved inside an array; growing copies them into a new array and
/// publishes it with one reference write, after which the old array is never written again. A reader therefore
/// walks one array from a key's home slot to the first empty slot and sees a consistent chain without a lock
/// (8-byte slot reads and writes are atomic). Writers (<see cref="Add"/>, <see cref="Resize"/>,
/// <see cref="Clear"/>) are serialized by the owner.
/// </remarks>
internal sealed class KeyTable
{
    /// <summary>Bytes per slot.</summary>
    public const int SlotBytes = sizeof(ulong);

    /// <summary>The largest share of slots in use before the table must grow.</summary>
    public const double MaxLoad = 0.8;

    /// <summary>The smallest capacity a table grows to, in slots.</summary>
    public const int MinCapacity = 1024;

    private ulong[] _slots = [];
    private long _count;

    /// <summary>The current slots (a reader keeps using the array it read, even after the table grows).</summary>
    public ulong[] Slots => Volatile.Read(ref _slots);

    /// <summary>Entries held.</summary>
    public long Count => _count;

    /// <summary>Memory held by the slots, in bytes.</summary>
    public long Bytes => (long)_slots.Length * SlotBytes;

    /// <summary>The slot value of a block: its key and its ID.</summary>
    public static ulong SlotOf(uint key, long id) => ((ulong)key << 32) | (uint)id;

    /// <summary>The slots to hold <paramref name="count"/> entries at the maximum load.</summary>
    public static long MinimumCapacity(long count) => Math.Max(MinCapacity, (long)Math.Ceiling(count / MaxLoad) + 1);

    /// <summary>Room a table grows to when inserts fill it: half as many entries again before the next growth.</summary>
    public const double GrowthHeadroom = 1.5;

    /// <summary>
    /// Room a table is sized to for a whole-table load: a quarter as many entries again (a backup run that adds up to
    /// 25 % new blocks never resizes), so a loaded map holds 1.25 / <see cref="MaxLoad"/> slots of <see cref="SlotBytes"/>
    /// bytes per block: 12.5 bytes.
    /// </summary>
    public const double LoadHeadroom = 1.25;

    /// <summary>The slots a table takes for <paramref name="count"/> entries with room for <paramref name="headroom"/> times as many.</summary>
    public static long PreferredCapacity(long count, double headroom = GrowthHeadroom) => Math.Max(MinCapacity, (long)(count / MaxLoad * headroom));

    /// <summary>Whether <paramref name="more"/> entries fit without growing.</summary>
    public bool HasRoomFor(long more) => _count + more <= (long)(_slots.Length * MaxLoad);

    /// <summary>Grows (when needed) so <paramref name="more"/> entries fit, without any memory limit (a session's own table).</summary>
    public void EnsureRoomFor(long more)
    {
        if (!HasRoomFor(more))
        {
            Resize(PreferredCapacity(_count + more));
        }
    }

    /// <summary>Adds an entry unless the same slot value is already there. The caller made room first.</summary>
    /// <returns><see langword="true"/> when added.</returns>
    public bool Add(ulong slot)
    {
        var slots = _slots;
        var i = Home((uint)(slot >> 32), slots.Length);
        while (true)
        {
            var current = slots[i];
            if (current == slot)
            {
                return false;
            }

            if (current == 0)
            {
                Volatile.Write(ref slots[i], slot);
                _count++;
                return true;
            }

            i = i + 1 == slots.Length ? 0 : i + 1;
        }
    }

    /// <summary>Copies the entries into a new array of <paramref name="capacity"/> slots and publishes it.</summary>
    public void Resize(long capacity)
    {
        if (capacity > Array.MaxLength || capacity < (long)Math.Ceiling(_count / MaxLoad))
        {
            throw new InvalidOperationException($"A key table of {capacity} slots cannot hold {_count} entries.");
        }

        var slots = new ulong[capacity];
        foreach (var slot in _slots)
        {
            if (slot != 0)
            {
                var i = Home((uint)(slot >> 32), slots.Length);
                while (slots[i] != 0)
                {
                    i = i + 1 == slots.Length ? 0 : i + 1;
                }

                slots[i] = slot;
            }
        }

        Volatile.Write(ref _slots, slots);
    }

    /// <summary>Takes <paramref name="slots"/> (a snapshot's table, <paramref name="count"/> entries) as this empty table's array.</summary>
    public void Adopt(ulong[] slots, long count)
    {
        if (_count != 0 || count > (long)(slots.Length * MaxLoad))
        {
            throw new InvalidOperationException("Only an empty table adopts a snapshot's slots, and only slots within the maximum load.");
        }

        _count = count;
        Volatile.Write(ref _slots, slots);
    }

    /// <summary>Removes every entry, keeping the array (a session's table after its batch ends).</summary>
    public void Clear()
    {
        if (_count > 0)
        {
            Array.Clear(_slots);
            _count = 0;
        }
    }

    /// <summary>Removes every entry whose ID is <paramref name="firstId"/> or above, rebuilding the array in place (a session's own table after a rolled-back savepoint; never the shared map, whose readers take no lock).</summary>
    public void RemoveIdsFrom(long firstId)
    {
        if (_count == 0)
        {
            return;
        }

        var kept = Array.FindAll(_slots, slot => slot != 0 && (uint)slot < firstId);
        if (kept.Length == _count)
        {
            return;
        }

        Clear();
        foreach (var slot in kept)
        {
            Add(slot);
        }
    }

    /// <summary>Whether the exact entry (key and ID) is in <paramref name="slots"/>.</summary>
    public static bool Holds(ulong[] slots, ulong slot)
    {
        if (slots.Length == 0)
        {
            return false;
        }

        var i = Home((uint)(slot >> 32), slots.Length);
        for (var step = 0; step < slots.Length; step++)
        {
            var current = Volatile.Read(ref slots[i]);
            if (current == slot)
            {
                return true;
            }

            if (current == 0)
            {
                return false;
            }

            i = i + 1 == slots.Length ? 0 : i + 1;
        }

        return false;
    }

    /// <summary>
    /// The IDs <paramref name="slots"/> proposes for <paramref name="key"/>, in probe order, up to the first empty slot
    /// (<c>foreach (var id in KeyTable.Candidates(slots, key))</c>). Only proposals: the caller verifies each against its
    /// <c>Block</c> row [M1]. A struct enumerator that has returned before the caller's verification runs.
    /// </summary>
    public static CandidateEnumerator Candidates(ulong[] slots, uint key) => new(slots, key);

    /// <summary>The home slot of a key: the key mapped onto the capacity by a multiply (no modulo, any capacity).</summary>
    private static int Home(uint key, int capacity) => (int)(((ulong)key * (uint)capacity) >> 32);

    /// <summary>The candidates of one key (<see cref="Candidates"/>): walks the slots from the key's home, lock-free (the class remarks' reader rule).</summary>
    public struct CandidateEnumerator(ulong[] slots, uint key)
    {
        private int _index = slots.Length == 0 ? 0 : Home(key, slots.Length);
        private int _steps;

        public uint Current { get; private set; }

        public readonly CandidateEnumerator GetEnumerator() => this;

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
        public bool MoveNext()
        {
            while (_steps < slots.Length)
            {
                var slot = Volatile.Read(ref slots[_index]);
                _index = _index + 1 == slots.Length ? 0 : _index + 1;
                _steps++;
                if (slot == 0)
                {
                    _steps = slots.Length;
                    return false;
                }

                if ((uint)(slot >> 32) == key)
                {
                    Current = (uint)slot;
                    return true;
                }
            }

            return false;
        }
    }
}
