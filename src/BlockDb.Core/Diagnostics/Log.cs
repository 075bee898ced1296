using Microsoft.Extensions.Logging;

namespace BlockDb.Diagnostics;

/// <summary>
/// Every message BlockDb logs, with a stable event ID (docs/OBSERVABILITY.md lists them): 1–9 opening and pragmas,
/// 10–19 the key map, 20–29 transactions (SQLite's); 30–39 checks and repairs, 40–49 bulk work (every engine).
/// </summary>
internal static partial class Log
{
    [LoggerMessage(EventId = 1, EventName = "DatabaseOpened", Level = LogLevel.Information, Message = "Opened BlockDb '{Path}' ({Layout} layout) with provider {Provider} on SQLite {Version}; pragmas: {Pragmas}")]
    public static partial void DatabaseOpened(ILogger logger, string path, BlockLayout layout, string provider, string version, PragmaSettings pragmas);

    [LoggerMessage(EventId = 2, EventName = "PragmasApplied", Level = LogLevel.Debug, Message = "Pragmas on {Path}: {Pragmas}")]
    public static partial void PragmasApplied(ILogger logger, string path, PragmaSettings pragmas);

    [LoggerMessage(EventId = 3, EventName = "PragmaCapped", Level = LogLevel.Warning, Message = "{Pragma} {Requested} was capped by SQLite to {Applied} on {Path} (a compile-time limit of this SQLite build).")]
    public static partial void PragmaCapped(ILogger logger, string pragma, long requested, long? applied, string path);

    [LoggerMessage(EventId = 4, EventName = "SchemaUpgraded", Level = LogLevel.Information, Message = "Upgraded '{Path}' ({Layout} layout) to BlockDb schema version {Version}.")]
    public static partial void SchemaUpgraded(ILogger logger, string path, BlockLayout layout, int version);

    [LoggerMessage(EventId = 5, EventName = "GuardsRestored", Level = LogLevel.Warning, Message = "'{Path}' had lost some of its {Layout} guards (removed or changed by SQL outside BlockDb); they were re-created and every open key map will reload.")]
    public static partial void GuardsRestored(ILogger logger, string path, BlockLayout layout);

    [LoggerMessage(EventId = 6, EventName = "DuplicatiIndexMissing", Level = LogLevel.Warning, Message = "The Duplicati database '{Path}' lacks its index {Index} (some 2025 canary builds did not create it); the lookups it serves scan the table instead. A Duplicati repair or recreate makes a fresh file with every index.")]
    public static partial void DuplicatiIndexMissing(ILogger logger, string path, string index);

    [LoggerMessage(EventId = 10, EventName = "KeyMapLoaded", Level = LogLevel.Information, Message = "Loaded the key map of '{Path}' from {Source}: {Entries} entries, {Bytes} bytes, in {ElapsedMilliseconds} ms.")]
    public static partial void KeyMapLoaded(ILogger logger, string path, string source, long entries, long bytes, long elapsedMilliseconds);

    [LoggerMessage(EventId = 11, EventName = "KeyMapFailed", Level = LogLevel.Error, Message = "The key map of '{Path}' failed to load; every call that needs it fails until a repair or a reopen: {Reason}")]
    public static partial void KeyMapFailed(ILogger logger, string path, string reason);

    [LoggerMessage(EventId = 12, EventName = "KeyMapSnapshotRefused", Level = LogLevel.Information, Message = "The key-map snapshot '{SnapshotPath}' of '{Path}' was not used, so the map is loaded by reading the Block table: {Reason}.")]
    public static partial void KeyMapSnapshotRefused(ILogger logger, string snapshotPath, string path, string reason);

    [LoggerMessage(EventId = 13, EventName = "KeyMapSnapshotWritten", Level = LogLevel.Information, Message = "Wrote the key-map snapshot '{SnapshotPath}': {Entries} entries through block ID {CoveredThrough}, {Bytes} bytes, in {ElapsedMilliseconds} ms.")]
    public static partial void KeyMapSnapshotWritten(ILogger logger, string snapshotPath, long entries, long coveredThrough, long bytes, long elapsedMilliseconds);

    [LoggerMessage(EventId = 14, EventName = "KeyMapSnapshotSkipped", Level = LogLevel.Debug, Message = "Did not write the key-map snapshot '{SnapshotPath}': {Reason}.")]
    public static partial void KeyMapSnapshotSkipped(ILogger logger, string snapshotPath, string reason);

    [LoggerMessage(EventId = 15, EventName = "KeyMapSnapshotWriteFailed", Level = LogLevel.Warning, Message = "Writing the key-map snapshot '{SnapshotPath}' failed; the next open reads the Block table instead: {Error}")]
    public static partial void KeyMapSnapshotWriteFailed(ILogger logger, string snapshotPath, string error);

    [LoggerMessage(EventId = 20, EventName = "SlowCommit", Level = LogLevel.Warning, Message = "COMMIT of {Writes} writes on '{Path}' took {ElapsedMilliseconds} ms (more than {ThresholdMilliseconds} ms: a slow disk, a checkpoint, or a reader holding the WAL).")]
    public static partial void SlowCommit(ILogger logger, int writes, string path, long elapsedMilliseconds, int thresholdMilliseconds);

    [LoggerMessage(EventId = 21, EventName = "BatchRolledBack", Level = LogLevel.Warning, Message = "A batch of {Writes} writes on '{Path}' was rolled back ({Reason}): {Error}")]
    public static partial void BatchRolledBack(ILogger logger, int writes, string path, string reason, string error);

    [LoggerMessage(EventId = 22, EventName = "Busy", Level = LogLevel.Warning, Message = "{Operation} on '{Path}' found the database locked after its busy timeout (SQLITE_BUSY): {Error}")]
    public static partial void Busy(ILogger logger, string operation, string path, string error);

    [LoggerMessage(EventId = 30, EventName = "CheckFinished", Level = LogLevel.Information, Message = "Checked '{Path}' in {ElapsedMilliseconds} ms; clean: {Clean}.")]
    public static partial void CheckFinished(ILogger logger, string path, bool clean, long elapsedMilliseconds);

    [LoggerMessage(EventId = 31, EventName = "RepairFinished", Level = LogLevel.Warning, Message = "Repaired '{Path}': {Merged} duplicate groups merged ({Deleted} blocks deleted, {Repointed} entries repointed), {Renumbered} blocks renumbered.")]
    public static partial void RepairFinished(ILogger logger, string path, long merged, long deleted, long repointed, long renumbered);

    [LoggerMessage(EventId = 40, EventName = "ImportFinished", Level = LogLevel.Information, Message = "Imported {Kind} into '{Path}': {Read} read, {Created} created, {Existing} already there, {Transactions} transactions, {ElapsedMilliseconds} ms.")]
    public static partial void ImportFinished(ILogger logger, string kind, string path, long read, long created, long existing, int transactions, long elapsedMilliseconds);

    [LoggerMessage(EventId = 41, EventName = "Collected", Level = LogLevel.Information, Message = "Collected {Blocks} unreferenced blocks ({Bytes} bytes) in '{Path}'.")]
    public static partial void Collected(ILogger logger, long blocks, long bytes, string path);
}
