using System.Globalization;

namespace BlockDb.KeyMap;

// The memory limit: reserving room, presizing, and the failure every later call reports.
internal sealed partial class BlockKeyMap
{
    /// <summary>Makes room for <paramref name="more"/> entries before a session writes them.</summary>
    /// <exception cref="BlockDbConfigurationException">They would take the map above its memory limit; nothing was written.</exception>
    public void Reserve(long more)
    {
        lock (_gate)
        {
            ThrowIfFailed();
            if (!TryReserveLocked(more))
            {
                throw LimitError(_table.Count + more);
            }
        }
    }

    /// <summary>
    /// Adds a bulk import's entry before its row is inserted [M3, M6]: the import holds the write lock and looks blocks up
    /// in this map only, so it finds its own rows with one probe. Should the row not commit, the entry stays as a stale
    /// one that verification rejects, like the entry of a deleted row; (W, V) move only after <c>COMMIT</c> (<see cref="Merge"/>).
    /// </summary>
    /// <exception cref="BlockDbConfigurationException">It would take the map above its memory limit; nothing was added.</exception>
    public void AddUncommitted(ulong slot)
    {
        lock (_gate)
        {
            ThrowIfFailed();
            if (!TryReserveLocked(1))
            {
                throw LimitError(_table.Count + 1);
            }

            _table.Add(slot);
        }
    }

    /// <summary>Grows the table when needed, counting the old and the new array together against the limit.</summary>
    private bool TryReserveLocked(long more, double headroom = KeyTable.GrowthHeadroom)
    {
        if (more <= 0 || _table.HasRoomFor(more))
        {
            return true;
        }

        var needed = _table.Count + more;
        foreach (var capacity in (ReadOnlySpan<long>)[KeyTable.PreferredCapacity(needed, headroom), KeyTable.MinimumCapacity(needed)])
        {
            if (capacity <= Array.MaxLength && _table.Bytes + (capacity * KeyTable.SlotBytes) <= _limitBytes)
            {
                _table.Resize(capacity);
                return true;
            }
        }

        return false;
    }

    private BlockDbConfigurationException LimitError(long blocks) => new(
        "BlockDb:Index:KeyMapMemoryLimitMegabytes",
        string.Create(CultureInfo.InvariantCulture,
            $"The KeyMap layout's key map needs more than BlockDb:Index:KeyMapMemoryLimitMegabytes = {LimitMegabytes} MB for {blocks:N0} blocks (it holds {_table.Bytes / 1048576.0:F1} MB now, and growing counts the old and the new table together); raise the limit (about 10-20 MB per million blocks) or use the BlobHash layout. Nothing was written."));

    /// <summary>Makes room for a whole-table read of <paramref name="rows"/> rows, as far as the limit allows (each chunk is checked again as it is added).</summary>
    public void Presize(long rows)
    {
        lock (_gate)
        {
            TryReserveLocked(rows - _table.Count, KeyTable.LoadHeadroom);
        }
    }

    /// <summary>Leaves the map failed (the first failure stays) and returns the error every later call will raise.</summary>
    public Exception Fail(bool memoryLimit, string message)
    {
        var failure = new Failure(memoryLimit, message);
        bool first;
        lock (_gate)
        {
            first = _failure is null;
            _failure ??= failure;
        }

        if (first)
        {
            Reporter?.Failed(message);
        }

        return failure.Create();
    }

    private void ThrowIfFailed()
    {
        if (Volatile.Read(ref _failure) is { } failure)
        {
            throw failure.Create();
        }
    }

    /// <summary>Why the map cannot be used: raised anew (same type and message) at every call until <see cref="Reset"/>.</summary>
    private sealed record Failure(bool MemoryLimit, string Message)
    {
        public BlockDbException Create() => MemoryLimit
            ? new BlockDbConfigurationException("BlockDb:Index:KeyMapMemoryLimitMegabytes", Message)
            : new BlockDbFormatException(Message);
    }
}
