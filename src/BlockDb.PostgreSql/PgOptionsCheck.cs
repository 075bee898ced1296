using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// The PostgreSQL provider's settings check: a setting is applied or refused, never ignored. Applied: the connection
/// string, <c>ReadOnly</c>, <c>Batching</c>, <c>SelectXorInsert</c> (all three strategies), <c>GroupCommit:MaxReaders</c>
/// (the shared session's connections), <c>GroupCommit:MaxBatchSize</c> and <c>QueueCapacity</c> (its gathered writes,
/// [S4]). Refused when set away from their defaults, naming the setting: the file path, the pragmas (durability and
/// caching are the server's settings), the KeyMap layout and its memory limit, and <c>GroupCommit:MaxDelayMilliseconds</c>
/// (a lane never waits for more writes).
/// </summary>
internal static class PgOptionsCheck
{
    private const string Section = BlockDbOptions.SectionName;

    /// <exception cref="BlockDbConfigurationException">A setting the provider cannot honour is set.</exception>
    public static void Validate(BlockDbOptions options)
    {
        if (options.DataSource is not null)
        {
            Refuse("DataSource", "BlockDb:DataSource is a SQLite file path; the PostgreSql provider connects with BlockDb:ConnectionString (or a registered NpgsqlDataSource). Remove DataSource.");
        }

        if (options.ConnectionString is { } connectionString)
        {
            try
            {
                _ = new NpgsqlConnectionStringBuilder(connectionString);
            }
            catch (ArgumentException e)
            {
                throw new BlockDbConfigurationException($"{Section}:ConnectionString", $"BlockDb:ConnectionString is not a valid Npgsql connection string: {Quoted.Value(e.Message)} (keywords: https://www.npgsql.org/doc/connection-string-parameters.html)", e);
            }
        }

        var pragmas = options.Pragmas;
        var set = new (string Name, bool IsSet)[]
        {
            ("Preset", pragmas.Preset != PragmaPreset.Recommended),
            ("JournalMode", pragmas.JournalMode is not null),
            ("Synchronous", pragmas.Synchronous is not null),
            ("TempStore", pragmas.TempStore is not null),
            ("CacheSize", pragmas.CacheSize is not null),
            ("MmapSize", pragmas.MmapSize is not null),
            ("Threads", pragmas.Threads is not null),
            ("BusyTimeout", pragmas.BusyTimeout is not null),
        }.FirstOrDefault(p => p.IsSet);
        if (set.Name is not null)
        {
            Refuse(
                $"Pragmas:{set.Name}",
                $"BlockDb:Pragmas:{set.Name} is a SQLite pragma; PostgreSQL has none. Durability and caching are the server's settings (synchronous_commit, shared_buffers; lock waits: lock_timeout, statement_timeout, set with the connection string's Options). Remove it.");
        }

        if (options.Index.Layout is { } layout && layout != BlockLayout.BlobHash)
        {
            Refuse("Index:Layout", $"BlockDb:Index:Layout is {layout}; the PostgreSql provider stores binary hashes under a unique index on the server ({nameof(BlockLayout.BlobHash)}), with no in-memory key map and no text hashes. Leave it unset or set {nameof(BlockLayout.BlobHash)}.");
        }

        if (options.Index.KeyMapMemoryLimitMegabytes != new IndexOptions().KeyMapMemoryLimitMegabytes)
        {
            Refuse("Index:KeyMapMemoryLimitMegabytes", "BlockDb:Index:KeyMapMemoryLimitMegabytes bounds the KeyMap layout's in-memory map; the PostgreSql provider keeps no map. Remove it.");
        }

        if (options.Batching.ReadsPerTransaction is not null)
        {
            Refuse("Batching:ReadsPerTransaction", "BlockDb:Batching:ReadsPerTransaction batches SQLite's read transactions; on PostgreSQL each read is one statement with its own snapshot, so there is nothing to batch. Remove it.");
        }

        if (options.Batching.ReadTransactionMilliseconds != new BatchingOptions().ReadTransactionMilliseconds)
        {
            Refuse("Batching:ReadTransactionMilliseconds", "BlockDb:Batching:ReadTransactionMilliseconds bounds SQLite's batched read transactions; the PostgreSql provider holds none. Remove it.");
        }

        if (options.GroupCommit.MaxDelayMilliseconds != new GroupCommitOptions().MaxDelayMilliseconds)
        {
            Refuse(
                "GroupCommit:MaxDelayMilliseconds",
                "BlockDb:GroupCommit:MaxDelayMilliseconds keeps the SQLite shared session's batch open for more writes; on PostgreSQL a lane sends what is queued at once and never waits for more (GroupCommit:MaxBatchSize, QueueCapacity and MaxReaders apply). Remove it.");
        }
    }

    private static void Refuse(string setting, string message) =>
        throw new BlockDbConfigurationException($"{Section}:{setting}", message);
}
