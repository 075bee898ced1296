using BlockDb.PostgreSql;

namespace BlockDb;

/// <summary>What only the PostgreSQL provider offers beyond <see cref="IBlockDatabase"/>.</summary>
public static class PostgreSqlBlockDatabaseExtensions
{
    /// <summary>
    /// Imports many blocks named by text hashes, in one transaction: a thin wrapper over
    /// <see cref="IBlockDatabase.ImportBlocksAsync"/> (binary <c>COPY</c> into a temporary table, then one set-based insert
    /// of the new blocks) with <see cref="ImportOptions.ItemsPerTransaction"/> at its maximum, so up to
    /// <see cref="ImportOptions.MaxItemsPerTransaction"/> blocks are all or nothing (a longer input commits every that many).
    /// Blocks already there, or repeated in the input, are skipped. New code should call
    /// <see cref="IBlockDatabase.ImportBlocksAsync"/> with <see cref="ImportBlock"/> values: binary hashes, volumes,
    /// transactions of its choosing, progress, and the same code on every provider.
    /// </summary>
    /// <param name="database">A database opened with the <c>PostgreSql</c> provider.</param>
    /// <param name="blocks">The blocks, read once, in any order.</param>
    /// <param name="cancellationToken">Checked between blocks and before the commit; a cancelled import imports nothing (of the transaction in progress).</param>
    /// <returns>The number of blocks inserted (new to the index).</returns>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="database"/> is not a PostgreSQL database, or a block's hash or size is invalid (nothing of the transaction in progress imported).</exception>
    /// <exception cref="BlockDbReadOnlyException">The database was opened read-only (SQLSTATE 25006).</exception>
    /// <exception cref="OperationCanceledException">Cancelled; nothing of the transaction in progress imported.</exception>
    /// <exception cref="BlockDbException">The server failed; nothing of the transaction in progress imported; <see cref="BlockDbException.SqlState"/> holds its SQLSTATE.</exception>
    public static async ValueTask<long> ImportBlocksAsync(this IBlockDatabase database, IEnumerable<BlockKey> blocks, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentNullException.ThrowIfNull(blocks);
        if (database is not PostgreSqlDatabase)
        {
            throw new ArgumentException($"This ImportBlocksAsync overload needs a database of the PostgreSql provider; this one is '{database.ProviderName}'. Use IBlockDatabase.ImportBlocksAsync(IAsyncEnumerable<ImportBlock>, ...) instead: it runs on every provider.", nameof(database));
        }

        var options = new ImportOptions { ItemsPerTransaction = ImportOptions.MaxItemsPerTransaction };
        var result = await database.ImportBlocksAsync(blocks.Select(ToImportBlock).ToAsyncEnumerable(), options, cancellationToken).ConfigureAwait(false);
        return result.Created;
    }

    /// <summary>A text block as an import block.</summary>
    /// <exception cref="ArgumentException">The hash or the size is invalid.</exception>
    private static ImportBlock ToImportBlock(BlockKey block, int index) =>
        BlockHash.TryParse(block.Hash, out var hash) && block.Size >= 1
            ? new ImportBlock(hash, block.Size)
            : throw new ArgumentException($"Block {index} of the import is invalid: hash {Quoted.Value(block.Hash)} ({block.Hash?.Length ?? 0:N0} characters), size {block.Size}; give a base64 hash with '=' padding and a size of 1 byte or more. Nothing of the transaction in progress was imported.", "blocks");
}
