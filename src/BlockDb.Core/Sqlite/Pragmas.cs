using System.Globalization;
using BlockDb.Diagnostics;
using BlockDb.Drivers;
using Microsoft.Extensions.Logging;

namespace BlockDb.Sqlite;

/// <summary>
/// Applies typed pragmas to a connection and reads them back (<see href="https://www.sqlite.org/pragma.html"/>).
/// The pragma text is built from BlockDb's constants and validated enum and integer values only.
/// </summary>
internal static class Pragmas
{
    /// <summary>The values to apply: the preset's, overridden by every property that is set. <see langword="null"/> means "leave as is".</summary>
    /// <param name="options">The pragma options.</param>
    /// <returns>The resolved settings.</returns>
    public static PragmaSettings Resolve(PragmaOptions options)
    {
        var preset = options.Preset switch
        {
            PragmaPreset.SqliteDefaults => PragmaSettings.SqliteDefaults,
            PragmaPreset.Recommended => PragmaSettings.Recommended,
            _ => PragmaSettings.None,
        };
        return new PragmaSettings(
            options.JournalMode ?? preset.JournalMode,
            options.Synchronous ?? preset.Synchronous,
            options.TempStore ?? preset.TempStore,
            options.CacheSize ?? preset.CacheSize,
            options.MmapSize ?? preset.MmapSize,
            options.Threads ?? preset.Threads,
            options.BusyTimeout ?? preset.BusyTimeout);
    }

    public static void ApplyBusyTimeout(ISqliteConnection connection, PragmaSettings requested)
    {
        if (requested.BusyTimeout is { } ms)
        {
            connection.Execute(Set("busy_timeout", ms));
        }
    }

    /// <summary>
    /// Applies every requested value but busy_timeout (applied first, on its own), then reads all back and checks them.
    /// A read-only connection cannot change <c>journal_mode</c>: the file's mode must then be the requested one.
    /// </summary>
    public static PragmaSettings ApplyAndVerify(ISqliteConnection connection, PragmaSettings requested, ILogger logger, string path, bool readOnly)
    {
        if (requested.JournalMode is { } journal)
        {
            if (readOnly)
            {
                var current = ParseJournal(connection.QueryText("PRAGMA journal_mode"));
                if (current != journal)
                {
                    throw new BlockDbConfigurationException(
                        "BlockDb:Pragmas:JournalMode",
                        $"{Quoted.Path(path)} is in journal mode {current} and BlockDb:ReadOnly = true cannot change it to the requested {journal}; set BlockDb:Pragmas:JournalMode to {current} (or use Preset None) for read-only opens.");
                }
            }
            else
            {
                SetJournalMode(connection, journal, requested.BusyTimeout ?? 0);
            }
        }

        if (requested.Synchronous is { } sync)
        {
            connection.Execute(Set("synchronous", (int)sync));
        }

        if (requested.TempStore is { } temp)
        {
            connection.Execute(Set("temp_store", (int)temp));
        }

        if (requested.CacheSize is { } cache)
        {
            connection.Execute(Set("cache_size", cache));
        }

        if (requested.MmapSize is { } mmap)
        {
            connection.QueryText(Set("mmap_size", mmap));
        }

        if (requested.Threads is { } threads)
        {
            connection.QueryText(Set("threads", threads));
        }

        var applied = Read(connection);
        Verify(requested, applied, logger, path);
        Log.PragmasApplied(logger, path, applied);
        return applied;
    }

    /// <summary>
    /// Changing the journal mode needs a lock that SQLite does not wait for through <c>busy_timeout</c>: while another
    /// connection opens the same new file it returns <c>SQLITE_BUSY</c> at once. Retry for up to the busy timeout.
    /// </summary>
    private static void SetJournalMode(ISqliteConnection connection, JournalMode journal, int busyTimeoutMilliseconds)
    {
        var sql = "PRAGMA journal_mode = " + JournalName(journal);
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                // Returns the mode now in force; checked with the others afterwards.
                connection.QueryText(sql);
                return;
            }
            catch (BlockDbException e) when (e.IsTransient
                && System.Diagnostics.Stopwatch.GetElapsedTime(started).TotalMilliseconds < busyTimeoutMilliseconds)
            {
                Thread.Sleep(Math.Min(1 << Math.Min(attempt, 5), 50));
            }
        }
    }

    public static PragmaSettings Read(ISqliteConnection connection) => new(
        ParseJournal(connection.QueryText("PRAGMA journal_mode")),
        (SynchronousMode)ReadInt(connection, "synchronous"),
        (TempStoreMode)ReadInt(connection, "temp_store"),
        ReadInt(connection, "cache_size"),
        ReadInt(connection, "mmap_size"),
        (int)ReadInt(connection, "threads"),
        (int)ReadInt(connection, "busy_timeout"));

    private static void Verify(PragmaSettings requested, PragmaSettings applied, ILogger logger, string path)
    {
        Check("journal_mode", requested.JournalMode, applied.JournalMode);
        Check("synchronous", requested.Synchronous, applied.Synchronous);
        Check("temp_store", requested.TempStore, applied.TempStore);
        Check("cache_size", requested.CacheSize, applied.CacheSize);
        Check("busy_timeout", requested.BusyTimeout, applied.BusyTimeout);

        // mmap_size and threads are capped by compile-time limits (SQLITE_MAX_MMAP_SIZE, SQLITE_MAX_WORKER_THREADS):
        // a lower value is SQLite's documented behaviour, reported rather than refused.
        if (requested.MmapSize is { } mmap && applied.MmapSize != mmap)
        {
            Log.PragmaCapped(logger, "mmap_size", mmap, applied.MmapSize, path);
        }

        if (requested.Threads is { } threads && applied.Threads != threads)
        {
            Log.PragmaCapped(logger, "threads", threads, applied.Threads, path);
        }

        static void Check<T>(string name, T? want, T? got)
            where T : struct
        {
            if (want is { } w && !EqualityComparer<T>.Default.Equals(w, got.GetValueOrDefault()))
            {
                throw new BlockDbException($"PRAGMA {name}: requested {w}, but SQLite reports {got} after setting it (see https://www.sqlite.org/pragma.html#pragma_{name}).");
            }
        }
    }

    private static string Set(string name, long value) => string.Create(CultureInfo.InvariantCulture, $"PRAGMA {name} = {value}");

    private static long ReadInt(ISqliteConnection connection, string name)
    {
        var text = connection.QueryText("PRAGMA " + name);
        return long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new BlockDbException($"PRAGMA {name} returned {Quoted.Value(text)}, not an integer.");
    }

    private static string JournalName(JournalMode mode) => mode switch
    {
        JournalMode.Delete => "DELETE",
        JournalMode.Truncate => "TRUNCATE",
        JournalMode.Persist => "PERSIST",
        JournalMode.Memory => "MEMORY",
        JournalMode.Wal => "WAL",
        JournalMode.Off => "OFF",
        _ => throw new ArgumentOutOfRangeException(nameof(mode), mode, "Unknown journal mode."),
    };

    private static JournalMode ParseJournal(string? text) =>
        Enum.TryParse<JournalMode>(text, ignoreCase: true, out var mode)
            ? mode
            : throw new BlockDbException($"PRAGMA journal_mode returned {Quoted.Value(text)}, which BlockDb does not know.");
}
