using System.Diagnostics;
using BlockDb.Drivers;

namespace BlockDb.KeyMap;

// The key map file: adopting it at the first catch-up, writing it at dispose (KeyMapFile).
internal sealed partial class BlockKeyMap
{
    /// <summary>
    /// The first load only (under <c>_load</c>, the table empty): adopts the snapshot when it passes every check, as a map
    /// at the snapshot's (W, V); the caller then catches up above W as after any load.
    /// </summary>
    private bool TryLoadSnapshot(KeyMapQueries statements, Activity? activity, out long after, out MapVersion version, CancellationToken cancellationToken)
    {
        (after, version) = (0, MapVersion.Unloaded);
        if (_snapshot is null || _snapshotTried || Count != 0)
        {
            return false;
        }

        // Tried once (a refused or failed snapshot is not read again), unless the caller cancelled the read.
        _snapshotTried = true;
        KeyMapFileLoad? loaded;
        try
        {
            loaded = _snapshot.TryLoad(statements.Connection, Hasher, _limitBytes, out var refusal, cancellationToken);
            activity?.SetTag("blockdb.keymap.snapshot.refused", refusal);
        }
        catch (OperationCanceledException)
        {
            _snapshotTried = false;
            throw;
        }

        if (loaded is not { } load)
        {
            return false;
        }

        lock (_gate)
        {
            _table.Adopt(load.Slots, load.Count);
            (_coveredThrough, _version) = (load.CoveredThrough, load.Version);
            _loadedFrom = (load.Token, load.CoveredThrough, load.Version, load.Count);
        }

        (after, version) = (load.CoveredThrough, load.Version);
        return true;
    }

    /// <summary>
    /// Writes the snapshot of this map, when it is loaded and not failed, to be used by the next open (called once the
    /// database that owns the map has disposed every session, so the table no longer changes). Never throws.
    /// </summary>
    public void WriteSnapshot(Func<int, ISqliteConnection> open)
    {
        if (_snapshot is null)
        {
            return;
        }

        KeyMapFileCapture capture;
        lock (_load)
        {
            lock (_gate)
            {
                if (_failure is not null || _version == MapVersion.Unloaded || _table.Count == 0 && _coveredThrough == 0)
                {
                    return;
                }

                var unchanged = _loadedFrom is { } from && from.CoveredThrough == _coveredThrough && from.Version == _version && from.Count == _table.Count ? from.Token : (Guid?)null;
                capture = new KeyMapFileCapture(_table.Slots, _table.Count, _coveredThrough, _version, unchanged, _wrote);
            }
        }

        _snapshot.Write(capture, Hasher, open);
    }
}
