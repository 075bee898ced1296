using System.Data;
using BlockDb.PostgreSql.Blocks;
using Npgsql;

namespace BlockDb.PostgreSql.Diagnostics;

/// <summary>
/// <see cref="IBlockDatabase.CheckAsync"/> and <see cref="IBlockDatabase.RepairAsync"/> on the server. The check reads
/// in one REPEATABLE READ, READ ONLY transaction (one snapshot, beside running writers:
/// <see href="https://www.postgresql.org/docs/current/transaction-iso.html#XACT-REPEATABLE-READ"/>). The unique index and
/// CHECK constraints keep duplicates and bad hashes out, so the check finds them only where SQL outside BlockDb dropped
/// a constraint; in place of SQLite's <c>integrity_check</c> it verifies that the unique index exists and is valid.
/// </summary>
internal static class PgCheck
{
    private const int Max = BlockDbCheckResult.MaxListed;

    private static readonly string Duplicates = $"""
        WITH d AS (SELECT "ID", row_number() OVER (PARTITION BY "Hash", "Size" ORDER BY "ID") AS rn FROM "Block")
        SELECT count(*) FILTER (WHERE rn > 1), (array_agg("ID" ORDER BY "ID") FILTER (WHERE rn > 1))[1:{Max}], count(*) FILTER (WHERE rn = 2) FROM d
        """;

    private static readonly string Dangling = $"""
        SELECT count(*), (array_agg(DISTINCT e."BlocksetID"))[1:{Max}] FROM "BlocksetEntry" e
        WHERE NOT EXISTS (SELECT 1 FROM "Block" b WHERE b."ID" = e."BlockID")
        """;

    private static readonly string Lengths = $"""
        WITH s AS (SELECT bs."ID", bs."Length", coalesce(sum(b."Size"), 0) AS total FROM "Blockset" bs
            LEFT JOIN "BlocksetEntry" e ON e."BlocksetID" = bs."ID" LEFT JOIN "Block" b ON b."ID" = e."BlockID" GROUP BY bs."ID")
        SELECT count(*), (array_agg("ID" ORDER BY "ID"))[1:{Max}] FROM s WHERE "Length" <> total
        """;

    private static readonly string Order = $"""
        WITH g AS (SELECT "BlocksetID", count(*) AS n, min("Index") AS lo, max("Index") AS hi FROM "BlocksetEntry" GROUP BY "BlocksetID")
        SELECT count(*), (array_agg("BlocksetID" ORDER BY "BlocksetID"))[1:{Max}] FROM g WHERE lo <> 0 OR hi <> n - 1
        """;

    private static readonly string OutOfRange = $"""SELECT count(*), (array_agg("ID" ORDER BY "ID"))[1:{Max}] FROM "Block" WHERE "ID" < 1""";

    private static readonly string Unusable = $"""SELECT count(*), (array_agg("ID" ORDER BY "ID"))[1:{Max}] FROM "Block" WHERE octet_length("Hash") NOT BETWEEN 1 AND 66 OR "Size" < 1""";

    private static readonly string VolumeProblems = $"""
        SELECT count(*), (array_agg(b."ID" ORDER BY b."ID"))[1:{Max}] FROM "Block" b
        WHERE b."VolumeID" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "Remotevolume" v WHERE v."ID" = b."VolumeID" AND v."State" <> 'Deleted')
        """;

    private const string UniqueIndex = """SELECT coalesce((SELECT i.indisvalid AND i.indisunique FROM pg_index i WHERE i.indexrelid = to_regclass('"BlockHashSize"')), false)""";

    private const string Merge = """
        WITH d AS (SELECT "ID", min("ID") OVER (PARTITION BY "Hash", "Size") AS keep FROM "Block"),
        u AS (UPDATE "BlocksetEntry" e SET "BlockID" = d.keep FROM d WHERE e."BlockID" = d."ID" AND d."ID" <> d.keep RETURNING 1),
        x AS (DELETE FROM "Block" b USING d WHERE b."ID" = d."ID" AND d."ID" <> d.keep RETURNING 1)
        SELECT (SELECT count(DISTINCT keep) FROM d WHERE "ID" <> keep), (SELECT count(*) FROM x), (SELECT count(*) FROM u)
        """;

    /// <summary>Checks the index in one snapshot.</summary>
    public static async Task<BlockDbCheckResult> RunAsync(PgContext context, CancellationToken cancellationToken)
    {
        var connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using var connectionScope = connection.ConfigureAwait(false);
        var transaction = await connection.BeginTransactionAsync(IsolationLevel.RepeatableRead, cancellationToken).ConfigureAwait(false);
        await using var transactionScope = transaction.ConfigureAwait(false);
        using (var readOnly = new NpgsqlCommand("SET TRANSACTION READ ONLY", connection, transaction))
        {
            await readOnly.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        var result = await CheckAsync(connection, transaction, cancellationToken).ConfigureAwait(false);
        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
        return result;
    }

    /// <summary>
    /// Merges duplicate (Hash, Size) rows into their lowest ID (entries repointed) in one transaction, then checks.
    /// Refuses to run beside another writer: the table lock is taken with NOWAIT, so a writer's open batch makes it
    /// fail at once with SQLSTATE 55P03 and change nothing.
    /// </summary>
    public static async Task<BlockDbRepairResult> RepairAsync(PgContext context, CancellationToken cancellationToken)
    {
        var connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using var connectionScope = connection.ConfigureAwait(false);
        var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        await using var transactionScope = transaction.ConfigureAwait(false);
        using (var lockTables = new NpgsqlCommand("""LOCK TABLE "Block", "BlocksetEntry" IN SHARE ROW EXCLUSIVE MODE NOWAIT""", connection, transaction))
        {
            await lockTables.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        long groups, deleted, repointed;
        using (var merge = new NpgsqlCommand(Merge, connection, transaction))
        {
            var reader = await merge.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            (groups, deleted, repointed) = (reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2));
        }

        var after = await CheckAsync(connection, transaction, cancellationToken).ConfigureAwait(false);
        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
        return new BlockDbRepairResult { MergedGroups = groups, DeletedBlocks = deleted, RepointedEntries = repointed, RenumberedBlocks = 0, After = after };
    }

    private static async Task<BlockDbCheckResult> CheckAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, CancellationToken cancellationToken)
    {
        var counts = await PgBlocks.CountsAsync(connection, transaction, cancellationToken).ConfigureAwait(false);
        var (duplicateRows, duplicateIds, duplicateGroups) = await FindingAsync(Duplicates, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (dangling, danglingIds, _) = await FindingAsync(Dangling, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (lengths, lengthIds, _) = await FindingAsync(Lengths, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (order, orderIds, _) = await FindingAsync(Order, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (range, rangeIds, _) = await FindingAsync(OutOfRange, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (unusable, unusableIds, _) = await FindingAsync(Unusable, connection, transaction, cancellationToken).ConfigureAwait(false);
        var (volumes, volumeIds, _) = await FindingAsync(VolumeProblems, connection, transaction, cancellationToken).ConfigureAwait(false);
        bool indexValid;
        using (var index = new NpgsqlCommand(UniqueIndex, connection, transaction))
        {
            indexValid = await index.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false) is true;
        }

        return new BlockDbCheckResult
        {
            Layout = BlockLayout.BlobHash,
            Counts = counts,
            DuplicateGroups = duplicateGroups,
            Duplicates = new BlockDbFinding(duplicateRows, duplicateIds),
            DanglingEntries = new BlockDbFinding(dangling, danglingIds),
            LengthMismatches = new BlockDbFinding(lengths, lengthIds),
            EntryOrder = new BlockDbFinding(order, orderIds),
            IdsOutOfRange = new BlockDbFinding(range, rangeIds),
            UnusableBlocks = new BlockDbFinding(unusable, unusableIds),
            VolumeProblems = new BlockDbFinding(volumes, volumeIds),
            MapMissing = BlockDbFinding.None,
            GuardsPresent = true,
            IntegrityCheck = indexValid ? "ok" : "the unique index \"BlockHashSize\" on (\"Hash\", \"Size\") is missing or not valid",
        };
    }

    /// <summary>A finding: its count, its first IDs, and an optional second count (duplicate groups).</summary>
    private static async Task<(long Count, long[] Ids, long Extra)> FindingAsync(string sql, NpgsqlConnection connection, NpgsqlTransaction transaction, CancellationToken cancellationToken)
    {
        using var command = new NpgsqlCommand(sql, connection, transaction);
        var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
        await using var readerScope = reader.ConfigureAwait(false);
        await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        var ids = reader.IsDBNull(1) ? [] : reader.GetFieldValue<long[]>(1);
        return (reader.GetInt64(0), ids, reader.FieldCount > 2 ? reader.GetInt64(2) : 0);
    }
}
