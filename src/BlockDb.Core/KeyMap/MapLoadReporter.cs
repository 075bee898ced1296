using System.Diagnostics;
using BlockDb.Drivers;
using Microsoft.Extensions.Logging;

namespace BlockDb.KeyMap;

/// <summary>
/// Reports a key map's whole-table loads (<c>blockdb.keymap.load.duration</c>, log event 10) and its failure (log event
/// 11) for the database that owns it.
/// </summary>
internal sealed class MapLoadReporter(string path, string provider, ILogger logger)
{
    private readonly TagList _tags = BlockDbInstruments.DatabaseTags("sqlite", provider, path);

    public void Loaded(long entries, long bytes, TimeSpan elapsed)
    {
        if (BlockDbInstruments.KeyMapLoadDuration.Enabled)
        {
            BlockDbInstruments.KeyMapLoadDuration.Record(elapsed.TotalSeconds, _tags);
        }

        Log.KeyMapLoaded(logger, path, entries, bytes, (long)elapsed.TotalMilliseconds);
    }

    public void Failed(string reason) => Log.KeyMapFailed(logger, path, reason);
}
