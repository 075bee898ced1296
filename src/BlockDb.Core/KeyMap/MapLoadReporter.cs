using System.Diagnostics;
using BlockDb.Diagnostics;
using Microsoft.Extensions.Logging;

namespace BlockDb.KeyMap;

/// <summary>
/// Reports a key map's whole-table loads (<c>blockdb.keymap.load.duration</c>, log event 10), whole-table or from the snapshot, and its failure (log event
/// 11) for the database that owns it.
/// </summary>
internal sealed class MapLoadReporter(string path, string provider, ILogger logger)
{
    private readonly TagList _tags = Instruments.DatabaseTags("sqlite", provider, path);

    /// <summary>A load finished: by reading the whole <c>Block</c> table, or from the snapshot file (<paramref name="fromSnapshot"/>) and a catch-up above it.</summary>
    public void Loaded(long entries, long bytes, TimeSpan elapsed, bool fromSnapshot)
    {
        var source = fromSnapshot ? "snapshot" : "scan";
        if (Instruments.KeyMapLoadDuration.Enabled)
        {
            var tags = _tags;
            tags.Add("blockdb.keymap.source", source);
            Instruments.KeyMapLoadDuration.Record(elapsed.TotalSeconds, tags);
        }

        Log.KeyMapLoaded(logger, path, source, entries, bytes, (long)elapsed.TotalMilliseconds);
    }

    public void Failed(string reason) => Log.KeyMapFailed(logger, path, reason);
}
