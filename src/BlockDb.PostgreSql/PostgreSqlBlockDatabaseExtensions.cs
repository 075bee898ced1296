using BlockDb.PostgreSql;
using BlockDb.PostgreSql.Maintenance;

namespace BlockDb;

/// <summary>What only the PostgreSQL provider offers beyond <see cref="IBlockDatabase"/>.</summary>
public static class PostgreSqlBlockDatabaseExtensions
{
    /// <summary>
    /// Imports many blocks at once, for a rebuild of the index (Duplicati's "recreate"): the blocks stream to the server
    /// by binary <c>COPY</c> into a temporary table, and the ones not yet in the index are inserted in one statement, in
    /// one transaction (all or nothing; blocks already there, or repeated in the input, are skipped). Hundreds of
    /// thousands of blocks per second on loopback (docs/BENCHMARKS.md). See
    /// <see href="https://www.postgresql.org/docs/current/sql-copy.html"/>.
    /// </summary>
    /// <param name="database">A database opened with the <c>PostgreSql</c> provider.</param>
    /// <param name="blocks">The blocks, read once, in any order.</param>
    /// <param name="cancellationToken">Checked every 4,096 blocks and passed to the server; a cancelled import imports nothing.</param>
    /// <returns>The number of blocks inserted (new to the index).</returns>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="database"/> is not a PostgreSQL database, or a block's hash or size is invalid (nothing imported).</exception>
    /// <exception cref="BlockDbReadOnlyException">The database was opened read-only (SQLSTATE 25006).</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing imported.</exception>
    /// <exception cref="BlockDbException">The server failed; nothing imported; <see cref="BlockDbException.SqlState"/> holds its SQLSTATE.</exception>
    public static async ValueTask<long> ImportBlocksAsync(this IBlockDatabase database, IEnumerable<BlockKey> blocks, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentNullException.ThrowIfNull(blocks);
        if (database is not PostgreSqlBlockDatabase pg)
        {
            throw new ArgumentException($"ImportBlocksAsync needs a database of the PostgreSql provider; this one is '{database.ProviderName}'. Use SelectXorInsertAsync on a session instead.", nameof(database));
        }

        pg.Context.RequireWritable(nameof(ImportBlocksAsync));
        try
        {
            return await PgBulkImport.RunAsync(pg.Context, blocks, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, nameof(ImportBlocksAsync));
        }
    }
}
