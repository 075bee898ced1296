using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture.Replay;

/// <summary>
/// Duplicati's <c>LocalDeleteDatabase.DropFilesetsFromTableAsync</c> (LDD 123-294) and
/// <c>LocalDatabase.RemoveRemoteVolumesAsync</c> (LD 1018-1376) on our own statement text, in Duplicati's order and
/// with its checks (facts §6.1, §6.4). What counts as a reference to a block: a <c>BlocksetEntry.BlockID</c>, or a
/// <c>BlocklistHash.Hash</c> equal to the block's hash (by hash only, not size). Unreferenced blocks are copied to
/// <c>DeletedBlock</c> (new IDs) and deleted from <c>Block</c>; <c>DuplicateBlock</c> is left as it is.
/// </summary>
public sealed class DuplicatiDeleteStatements : DuplicatiStatements, IDuplicatiDeleteDatabase
{
    // Blocks that are still in use: named by an entry, or whose hash is a blocklist hash.
    private const string ReferencedBlocks = """
        SELECT DISTINCT "BlockID" FROM "BlocksetEntry"
        UNION SELECT DISTINCT "Block"."ID" FROM "Block", "BlocklistHash" WHERE "Block"."Hash" = "BlocklistHash"."Hash"
        """;

    private DuplicatiDeleteStatements(SqliteConnection connection, bool ownsConnection)
        : base(connection, ownsConnection)
    {
    }

    /// <summary>Opens the delete's database object: begins the always-open transaction and inserts the <c>Operation</c> row "Delete".</summary>
    /// <param name="connection">An open connection with no transaction (opened as <see cref="DuplicatiConnection.Open"/> does).</param>
    /// <param name="operationTimeUtc">The delete's time.</param>
    /// <param name="ownsConnection">Whether disposing the object disposes the connection.</param>
    /// <param name="cancellationToken">Cancels the setup.</param>
    /// <returns>The object; dispose it (rolls back what is not committed).</returns>
    public static async Task<DuplicatiDeleteStatements> OpenAsync(SqliteConnection connection, DateTime operationTimeUtc, bool ownsConnection, CancellationToken cancellationToken)
    {
        var db = new DuplicatiDeleteStatements(connection, ownsConnection);
        try
        {
            await db.StartOperationAsync("Delete", operationTimeUtc, cancellationToken);
            return db;
        }
        catch
        {
            await db.DisposeAsync();
            throw;
        }
    }

    /// <inheritdoc/>
    public async ValueTask<IReadOnlyList<(string Name, long Size)>> DropFilesetsFromTableAsync(IReadOnlyList<DateTime> timestampsUtc, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(timestampsUtc);
        var deleted = 0;
        foreach (var time in timestampsUtc)
        {
            deleted += await ExecuteAsync("""DELETE FROM "Fileset" WHERE "Timestamp" = @Timestamp""", cancellationToken, ("@Timestamp", DuplicatiConstants.EpochSeconds(time)));
        }

        if (deleted != timestampsUtc.Count)
        {
            throw new InvalidOperationException($"Unexpected number of deleted filesets {deleted} vs {timestampsUtc.Count}");
        }

        await ExecuteAsync("""DELETE FROM "FilesetEntry" WHERE "FilesetID" NOT IN (SELECT DISTINCT "ID" FROM "Fileset")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "ChangeJournalData" WHERE "FilesetID" NOT IN (SELECT DISTINCT "ID" FROM "Fileset")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "FileLookup" WHERE "ID" NOT IN (SELECT DISTINCT "FileID" FROM "FilesetEntry")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "Metadataset" WHERE "ID" NOT IN (SELECT DISTINCT "MetadataID" FROM "FileLookup")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "Blockset" WHERE "ID" NOT IN (SELECT DISTINCT "BlocksetID" FROM "FileLookup" UNION SELECT DISTINCT "BlocksetID" FROM "Metadataset")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "BlocksetEntry" WHERE "BlocksetID" NOT IN (SELECT DISTINCT "ID" FROM "Blockset")""", cancellationToken);
        await ExecuteAsync("""DELETE FROM "BlocklistHash" WHERE "BlocksetID" NOT IN (SELECT DISTINCT "ID" FROM "Blockset")""", cancellationToken);
        await ExecuteAsync($"""INSERT INTO "DeletedBlock" ("Hash", "Size", "VolumeID") SELECT "Hash", "Size", "VolumeID" FROM "Block" WHERE "ID" NOT IN ({ReferencedBlocks})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "Block" WHERE "ID" NOT IN ({ReferencedBlocks})""", cancellationToken);

        var updated = await ExecuteAsync(
            """UPDATE "Remotevolume" SET "State" = @NewState WHERE "Type" = @Type AND "State" IN (@S0, @S1, @S2, @S3) AND "ID" NOT IN (SELECT "VolumeID" FROM "Fileset")""",
            cancellationToken,
            ("@NewState", nameof(DuplicatiVolumeState.Deleting)),
            ("@Type", nameof(DuplicatiVolumeType.Files)),
            ("@S0", nameof(DuplicatiVolumeState.Uploaded)),
            ("@S1", nameof(DuplicatiVolumeState.Verified)),
            ("@S2", nameof(DuplicatiVolumeState.Temporary)),
            ("@S3", nameof(DuplicatiVolumeState.Deleting)));
        if (updated != deleted)
        {
            throw new InvalidOperationException($"Unexpected number of remote volumes marked as deleted. Found {deleted} filesets, but {updated} volumes");
        }

        using var command = Connection.CreateCommand();
        command.Transaction = Transaction.Current;
        command.CommandText = """SELECT "Name", "Size" FROM "Remotevolume" WHERE "Type" = @Type AND "State" = @State""";
        command.Parameters.AddWithValue("@Type", nameof(DuplicatiVolumeType.Files));
        command.Parameters.AddWithValue("@State", nameof(DuplicatiVolumeState.Deleting));
        var volumes = new List<(string, long)>();
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            volumes.Add((reader.GetString(0), reader.IsDBNull(1) ? 0 : reader.GetInt64(1)));
        }

        return volumes;
    }
}
