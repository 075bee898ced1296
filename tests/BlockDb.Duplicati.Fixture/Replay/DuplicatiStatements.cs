using System.Globalization;
using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture.Replay;

/// <summary>
/// One prepared Microsoft.Data.Sqlite command, kept for the object's life and bound again at every call, as Duplicati
/// keeps its commands (Microsoft.Data.Sqlite caches the prepared statements per command). Every execution carries the
/// transaction that is open at that moment (Duplicati's <c>SetTransaction(m_rtr)</c>).
/// </summary>
internal sealed class Statement : IDisposable
{
    private readonly SqliteCommand _command;
    private readonly DuplicatiTransaction _transaction;

    public Statement(DuplicatiTransaction transaction, string sql, params string[] parameters)
    {
        _transaction = transaction;
        _command = transaction.Connection.CreateCommand();
        _command.CommandText = sql;
        foreach (var name in parameters)
        {
            _command.Parameters.Add(new SqliteParameter(name, null));
        }
    }

    public Statement Bind(int index, object? value)
    {
        _command.Parameters[index].Value = value ?? DBNull.Value;
        return this;
    }

    /// <summary>The first column of the first row as a number, or <paramref name="absent"/> when there is no row or it is NULL (Duplicati's <c>ExecuteScalarInt64Async</c>).</summary>
    public async ValueTask<long> ScalarAsync(CancellationToken cancellationToken, long absent = -1)
    {
        _command.Transaction = _transaction.Current;
        var value = await _command.ExecuteScalarAsync(cancellationToken);
        return value is null or DBNull ? absent : Convert.ToInt64(value, CultureInfo.InvariantCulture);
    }

    public async ValueTask<object?> ScalarObjectAsync(CancellationToken cancellationToken)
    {
        _command.Transaction = _transaction.Current;
        var value = await _command.ExecuteScalarAsync(cancellationToken);
        return value is DBNull ? null : value;
    }

    public async ValueTask<int> NonQueryAsync(CancellationToken cancellationToken)
    {
        _command.Transaction = _transaction.Current;
        return await _command.ExecuteNonQueryAsync(cancellationToken);
    }

    public async ValueTask<SqliteDataReader> ReaderAsync(CancellationToken cancellationToken)
    {
        _command.Transaction = _transaction.Current;
        return await _command.ExecuteReaderAsync(cancellationToken);
    }

    public void Dispose() => _command.Dispose();
}

/// <summary>
/// Duplicati's <c>LocalDatabase</c> on our own statement text: one connection opened with Duplicati's pragmas, a
/// deferred transaction always open (<see cref="DuplicatiTransaction"/>), an <c>Operation</c> row inserted at open
/// (Description = the operation, Timestamp = epoch seconds), remote volumes and the remote-operation log
/// (<c>Duplicati/Library/Main/Database/Local/LocalDatabase.cs</c>; facts §2, §4.8).
/// </summary>
public abstract class DuplicatiStatements : IDuplicatiDatabase
{
    private readonly bool _ownsConnection;
    private readonly List<Statement> _statements = [];
    private Statement _registerVolume = null!;
    private Statement _updateVolume = null!;
    private Statement _updateGrace = null!;
    private Statement _volumeId = null!;
    private Statement _logRemote = null!;

    /// <summary>Takes the connection (and, when <paramref name="ownsConnection"/>, disposes it) and begins the always-open transaction.</summary>
    /// <param name="connection">An open connection with no transaction.</param>
    /// <param name="ownsConnection">Whether disposing this object disposes the connection.</param>
    protected DuplicatiStatements(SqliteConnection connection, bool ownsConnection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        _ownsConnection = ownsConnection;
        Transaction = new DuplicatiTransaction(connection);
    }

    /// <summary>The connection.</summary>
    public SqliteConnection Connection => Transaction.Connection;

    /// <summary>The always-open transaction (ask <see cref="DuplicatiTransaction.Current"/> each time).</summary>
    public DuplicatiTransaction Transaction { get; }

    /// <inheritdoc/>
    public long OperationId { get; private set; }

    /// <summary>The operation's time (UTC), as given at open.</summary>
    public DateTime OperationTimeUtc { get; private set; }

    /// <summary>The clock for "now" (grace times, log timestamps): the operation's time, so a replay is repeatable.</summary>
    protected DateTime NowUtc => OperationTimeUtc;

    /// <inheritdoc/>
    public ValueTask CommitAsync(string reason, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Transaction.Commit(reason);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public async ValueTask<long> RegisterRemoteVolumeAsync(string name, DuplicatiVolumeType type, DuplicatiVolumeState state, CancellationToken cancellationToken) =>
        await _registerVolume.Bind(0, OperationId).Bind(1, name).Bind(2, type.ToString()).Bind(3, state.ToString()).Bind(4, -1L)
            .Bind(5, 0L).Bind(6, 0L).Bind(7, 0L).Bind(8, 0L).ScalarAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask UpdateRemoteVolumeAsync(string name, DuplicatiVolumeState state, long size, string? hash, TimeSpan deleteGrace, CancellationToken cancellationToken)
    {
        var changed = await _updateVolume.Bind(0, OperationId).Bind(1, state.ToString()).Bind(2, hash).Bind(3, size).Bind(4, name).NonQueryAsync(cancellationToken);
        if (changed != 1)
        {
            throw new InvalidOperationException($"Unexpected number of remote volumes detected: {changed}!");
        }

        if (deleteGrace > TimeSpan.Zero)
        {
            changed = await _updateGrace.Bind(0, DuplicatiConstants.EpochSeconds(NowUtc + deleteGrace)).Bind(1, name).NonQueryAsync(cancellationToken);
            if (changed != 1)
            {
                throw new InvalidOperationException($"Unexpected number of updates when recording remote volume updates: {changed}!");
            }
        }
    }

    /// <inheritdoc/>
    public async ValueTask<long> GetRemoteVolumeIdAsync(string name, CancellationToken cancellationToken) =>
        await _volumeId.Bind(0, name).ScalarAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask LogRemoteOperationAsync(string operation, string path, string? data, CancellationToken cancellationToken) =>
        await _logRemote.Bind(0, OperationId).Bind(1, DuplicatiConstants.EpochSeconds(NowUtc)).Bind(2, operation).Bind(3, path).Bind(4, data).NonQueryAsync(cancellationToken);

    /// <inheritdoc/>
    public async ValueTask RemoveRemoteVolumesAsync(IReadOnlyList<string> names, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(names);
        if (names.Count == 0)
        {
            return;
        }

        const string Orphans = """SELECT COUNT(*) FROM "FilesetEntry" WHERE "FileID" NOT IN (SELECT "ID" FROM "FileLookup")""";
        var orphans = await ScalarAsync(Orphans, cancellationToken);
        if (orphans > 0)
        {
            throw new InvalidOperationException($"Refusing to remove remote volumes, detected {orphans} file(s) in FilesetEntry without corresponding FileLookup entry");
        }

        var volumes = HexName("DelVolSetIds-");
        var blocksets = HexName("DelBlockSetIds-");
        var metadata = HexName("DelMetadataFilesetIds-");
        var filesets = HexName("DelFilesetIds-");
        var volumeIds = $"""SELECT "ID" FROM "{volumes}" """;
        var blocksetIds = $"""SELECT DISTINCT "ID" FROM "{blocksets}" """;

        await ExecuteAsync($"""CREATE TEMP TABLE "{volumes}" ("ID" INTEGER PRIMARY KEY)""", cancellationToken);
        foreach (var name in names)
        {
            await ExecuteAsync($"""INSERT OR IGNORE INTO "{volumes}" SELECT "ID" FROM "Remotevolume" WHERE "Name" = @Name""", cancellationToken, ("@Name", name));
        }

        // Blocksets that use a block of those volumes, as an entry or as a blocklist block.
        await ExecuteAsync($"""CREATE TEMP TABLE "{blocksets}" ("ID" INTEGER PRIMARY KEY)""", cancellationToken);
        await ExecuteAsync(
            $"""
            INSERT OR IGNORE INTO "{blocksets}" ("ID")
            SELECT DISTINCT "E"."BlocksetID" FROM "BlocksetEntry" "E", "Block" "B" WHERE "E"."BlockID" = "B"."ID" AND "B"."VolumeID" IN ({volumeIds})
            UNION ALL SELECT DISTINCT "BlocksetID" FROM "BlocklistHash" WHERE "Hash" IN (SELECT "Hash" FROM "Block" WHERE "VolumeID" IN ({volumeIds}))
            """,
            cancellationToken);

        // Metadata whose own blockset goes, with the filesets that use it.
        await ExecuteAsync($"""CREATE TEMP TABLE "{metadata}" ("MetadataID" INTEGER, "FilesetID" INTEGER, CONSTRAINT "PK_{metadata}" PRIMARY KEY ("MetadataID", "FilesetID"))""", cancellationToken);
        await ExecuteAsync(
            $"""
            INSERT OR IGNORE INTO "{metadata}" ("MetadataID", "FilesetID")
            SELECT "M"."ID", "E"."FilesetID" FROM "Metadataset" "M"
            JOIN "FileLookup" "L" ON "L"."MetadataID" = "M"."ID" JOIN "FilesetEntry" "E" ON "E"."FileID" = "L"."ID"
            WHERE "M"."BlocksetID" IN ({blocksetIds})
            """,
            cancellationToken);
        await ExecuteAsync(
            $"""
            DELETE FROM "FilesetEntry" WHERE "FilesetID" IN (SELECT DISTINCT "FilesetID" FROM "{metadata}")
            AND "FileID" IN (SELECT "E"."FileID" FROM "FilesetEntry" "E" JOIN "FileLookup" "L" ON "L"."ID" = "E"."FileID" WHERE "L"."MetadataID" IN (SELECT "MetadataID" FROM "{metadata}"))
            """,
            cancellationToken);
        await ExecuteAsync($"""DELETE FROM "FilesetEntry" WHERE "FileID" IN (SELECT "ID" FROM "FileLookup" WHERE "BlocksetID" IN ({blocksetIds}))""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "FileLookup" WHERE "MetadataID" IN (SELECT "MetadataID" FROM "{metadata}")""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "Metadataset" WHERE "BlocksetID" IN ({blocksetIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "FileLookup" WHERE "BlocksetID" IN ({blocksetIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "Blockset" WHERE "ID" IN ({blocksetIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "BlocksetEntry" WHERE "BlocksetID" IN ({blocksetIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "BlocklistHash" WHERE "BlocksetID" IN ({blocksetIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "IndexBlockLink" WHERE "BlockVolumeID" IN ({volumeIds}) OR "IndexVolumeID" IN ({volumeIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "Block" WHERE "VolumeID" IN ({volumeIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "DeletedBlock" WHERE "VolumeID" IN ({volumeIds})""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "ChangeJournalData" WHERE "FilesetID" IN (SELECT "ID" FROM "Fileset" WHERE "VolumeID" IN ({volumeIds}))""", cancellationToken);
        await ExecuteAsync($"""DELETE FROM "FilesetEntry" WHERE "FilesetID" IN (SELECT "ID" FROM "Fileset" WHERE "VolumeID" IN ({volumeIds}))""", cancellationToken);

        // Duplicati makes this one in the main schema (LD 1260) and drops it at the end.
        await ExecuteAsync($"""CREATE TABLE "{filesets}" ("ID" INTEGER PRIMARY KEY)""", cancellationToken);
        await ExecuteAsync($"""INSERT OR IGNORE INTO "{filesets}" SELECT "ID" FROM "Fileset" WHERE "VolumeID" IN ({volumeIds})""", cancellationToken);
        await ExecuteAsync(
            $"""
            INSERT OR IGNORE INTO "{filesets}" SELECT "ID" FROM "Fileset"
            WHERE "ID" IN (SELECT DISTINCT "FilesetID" FROM "{metadata}") AND "ID" NOT IN (SELECT DISTINCT "FilesetID" FROM "FilesetEntry")
            """,
            cancellationToken);
        await ExecuteAsync(
            $"""
            UPDATE "Remotevolume" SET "State" = @NewState
            WHERE "ID" IN (SELECT DISTINCT "VolumeID" FROM "Fileset" WHERE "ID" IN (SELECT "ID" FROM "{filesets}")) AND "State" IN (@S0, @S1, @S2, @S3)
            """,
            cancellationToken,
            ("@NewState", nameof(DuplicatiVolumeState.Deleting)),
            ("@S0", nameof(DuplicatiVolumeState.Uploading)),
            ("@S1", nameof(DuplicatiVolumeState.Uploaded)),
            ("@S2", nameof(DuplicatiVolumeState.Verified)),
            ("@S3", nameof(DuplicatiVolumeState.Temporary)));
        await ExecuteAsync($"""DELETE FROM "Fileset" WHERE "ID" IN (SELECT "ID" FROM "{filesets}")""", cancellationToken);

        foreach (var table in new[] { volumes, blocksets, metadata, filesets })
        {
            await ExecuteAsync($"""DELETE FROM "{table}" """, cancellationToken);
            await ExecuteAsync($"""DROP TABLE IF EXISTS "{table}" """, cancellationToken);
        }

        foreach (var name in names)
        {
            await ExecuteAsync(
                """DELETE FROM "Remotevolume" WHERE "Name" = @Name AND ("DeleteGraceTime" < @Now OR "State" != @State)""",
                cancellationToken,
                ("@Name", name),
                ("@Now", DuplicatiConstants.EpochSeconds(NowUtc)),
                ("@State", nameof(DuplicatiVolumeState.Deleted)));
        }

        orphans = await ScalarAsync(Orphans, cancellationToken);
        if (orphans > 0)
        {
            throw new InvalidOperationException($"Detected {orphans} file(s) in FilesetEntry without corresponding FileLookup entry after removing remote volumes");
        }
    }

    /// <summary>Rolls back what is not committed (as Duplicati's dispose does) and closes the connection when owned.</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var statement in _statements)
        {
            statement.Dispose();
        }

        _statements.Clear();
        Transaction.Dispose();
        if (_ownsConnection)
        {
            await Connection.DisposeAsync();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Prepares the shared statements and inserts the <c>Operation</c> row (LD 275-327).</summary>
    /// <param name="operation">Duplicati's description: "Backup", "Delete", ...</param>
    /// <param name="operationTimeUtc">The operation's time.</param>
    /// <param name="cancellationToken">Cancels before the insert.</param>
    protected async ValueTask StartOperationAsync(string operation, DateTime operationTimeUtc, CancellationToken cancellationToken)
    {
        OperationTimeUtc = operationTimeUtc;
        _registerVolume = Prepare(
            """INSERT INTO "Remotevolume" ("OperationID", "Name", "Type", "State", "Size", "VerificationCount", "DeleteGraceTime", "ArchiveTime", "LockExpirationTime") VALUES (@OperationID, @Name, @Type, @State, @Size, @VerificationCount, @DeleteGraceTime, @ArchiveTime, @LockExpirationTime); SELECT last_insert_rowid();""",
            "@OperationID", "@Name", "@Type", "@State", "@Size", "@VerificationCount", "@DeleteGraceTime", "@ArchiveTime", "@LockExpirationTime");
        _updateVolume = Prepare("""UPDATE "Remotevolume" SET "OperationID" = @OperationID, "State" = @State, "Hash" = @Hash, "Size" = @Size WHERE "Name" = @Name""", "@OperationID", "@State", "@Hash", "@Size", "@Name");
        _updateGrace = Prepare("""UPDATE "Remotevolume" SET "DeleteGraceTime" = @DeleteGraceTime WHERE "Name" = @Name""", "@DeleteGraceTime", "@Name");
        _volumeId = Prepare("""SELECT "ID" FROM "Remotevolume" WHERE "Name" = @Name""", "@Name");
        _logRemote = Prepare("""INSERT INTO "RemoteOperation" ("OperationID", "Timestamp", "Operation", "Path", "Data") VALUES (@OperationID, @Timestamp, @Operation, @Path, @Data)""", "@OperationID", "@Timestamp", "@Operation", "@Path", "@Data");
        using var insert = new Statement(Transaction, """INSERT INTO "Operation" ("Description", "Timestamp") VALUES (@Description, @Timestamp); SELECT last_insert_rowid();""", "@Description", "@Timestamp");
        OperationId = await insert.Bind(0, operation).Bind(1, DuplicatiConstants.EpochSeconds(operationTimeUtc)).ScalarAsync(cancellationToken);
    }

    /// <summary>A statement kept until dispose.</summary>
    internal Statement Prepare(string sql, params string[] parameters)
    {
        var statement = new Statement(Transaction, sql, parameters);
        _statements.Add(statement);
        return statement;
    }

    /// <summary>Runs SQL text once on the open transaction (DDL of temporary tables, one-off statements).</summary>
    /// <returns>Rows changed.</returns>
    protected async ValueTask<int> ExecuteAsync(string sql, CancellationToken cancellationToken, params (string Name, object? Value)[] parameters)
    {
        using var command = Connection.CreateCommand();
        command.Transaction = Transaction.Current;
        command.CommandText = sql;
        foreach (var (name, value) in parameters)
        {
            command.Parameters.Add(new SqliteParameter(name, value ?? DBNull.Value));
        }

        return await command.ExecuteNonQueryAsync(cancellationToken);
    }

    /// <summary>Runs SQL text once and returns the first column of the first row as a number, or −1.</summary>
    protected async ValueTask<long> ScalarAsync(string sql, CancellationToken cancellationToken, params (string Name, object? Value)[] parameters)
    {
        using var command = Connection.CreateCommand();
        command.Transaction = Transaction.Current;
        command.CommandText = sql;
        foreach (var (name, value) in parameters)
        {
            command.Parameters.Add(new SqliteParameter(name, value ?? DBNull.Value));
        }

        var result = await command.ExecuteScalarAsync(cancellationToken);
        return result is null or DBNull ? -1 : Convert.ToInt64(result, CultureInfo.InvariantCulture);
    }

    /// <summary>A temporary-table name as Duplicati makes them: a prefix and 32 hex digits (<c>Utility.GetHexGuid</c>).</summary>
    protected static string HexName(string prefix) => prefix + Guid.NewGuid().ToString("N");
}
