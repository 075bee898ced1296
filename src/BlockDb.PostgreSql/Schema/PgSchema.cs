using System.Globalization;
using Npgsql;

namespace BlockDb.PostgreSql.Schema;

/// <summary>
/// The provider's schema on the server: created on the first open of an empty database (schema), checked on every
/// open. Like the SQLite engine's <c>user_version</c> check, a database whose tables belong to another application, or
/// whose <c>BlockDbSettings</c> say a newer schema version, is refused with <see cref="BlockDbFormatException"/> and
/// left untouched. Tables live in the first schema of the connection's <c>search_path</c>.
/// </summary>
internal static class PgSchema
{
    /// <summary>The schema version this build writes and reads.</summary>
    public const int Version = 1;

    /// <summary>What the <c>Application</c> setting holds.</summary>
    public const string Application = "BlockDb";

    /// <summary>The advisory-lock key that serializes schema creation across processes (<c>pg_advisory_xact_lock</c>).</summary>
    private const long CreateLockKey = 0x426C6F636B4462; // "BlockDb"

    private const string Probe = """
        SELECT to_regclass('"BlockDbSettings"') IS NOT NULL,
               to_regclass('"Block"') IS NOT NULL OR to_regclass('"Blockset"') IS NOT NULL OR to_regclass('"BlocksetEntry"') IS NOT NULL
        """;

    private const string ReadSettings = """SELECT "Name", "Value" FROM "BlockDbSettings" """;

    // bytea hashes of 1 to 66 bytes (BlockHash's range), sizes of 1 byte or more, IDs from identity columns
    // (GENERATED ALWAYS: no writer can pick an ID). https://www.postgresql.org/docs/current/ddl-identity-columns.html
    private const string Create = """
        CREATE TABLE "BlockDbSettings" ("Name" text PRIMARY KEY, "Value" text NOT NULL);
        CREATE TABLE "Remotevolume" (
            "ID" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            "Name" text NOT NULL,
            "State" text NOT NULL CHECK ("State" IN ('Temporary', 'Uploading', 'Uploaded', 'Verified', 'Deleting', 'Deleted')),
            "Size" bigint NULL CHECK ("Size" >= 0));
        CREATE UNIQUE INDEX "RemotevolumeName" ON "Remotevolume" ("Name");
        CREATE TABLE "Block" (
            "ID" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            "Hash" bytea NOT NULL CHECK (octet_length("Hash") BETWEEN 1 AND 66),
            "Size" bigint NOT NULL CHECK ("Size" >= 1),
            "VolumeID" bigint NULL);
        CREATE UNIQUE INDEX "BlockHashSize" ON "Block" ("Hash", "Size");
        CREATE INDEX "BlockVolume" ON "Block" ("VolumeID");
        CREATE TABLE "Blockset" (
            "ID" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            "Length" bigint NOT NULL CHECK ("Length" >= 0),
            "FullHash" bytea NULL);
        CREATE TABLE "BlocksetEntry" (
            "BlocksetID" bigint NOT NULL,
            "Index" integer NOT NULL,
            "BlockID" bigint NOT NULL,
            CONSTRAINT "BlocksetEntry_PK_IdIndex" PRIMARY KEY ("BlocksetID", "Index"));
        CREATE INDEX "BlocksetEntry_IndexIdsBackwards" ON "BlocksetEntry" ("BlockID");
        """;

    private const string Seed = """INSERT INTO "BlockDbSettings" ("Name", "Value") VALUES ('Application', $1), ('SchemaVersion', $2), ('BlockLayout', $3)""";

    /// <summary>Checks the schema, creating it in an empty database unless <paramref name="readOnly"/>.</summary>
    /// <exception cref="BlockDbFormatException">Another application's tables, a newer schema, or (read-only) no schema.</exception>
    public static async Task EnsureAsync(NpgsqlConnection connection, bool readOnly, string server, CancellationToken cancellationToken)
    {
        if (await CheckAsync(connection, readOnly, server, cancellationToken).ConfigureAwait(false))
        {
            return;
        }

        // Creating: one process at a time (the advisory lock), and check again under it: another may have won.
        var transaction = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        await using var transactionScope = transaction.ConfigureAwait(false);
        using (var lockCommand = new NpgsqlCommand("SELECT pg_advisory_xact_lock($1)", connection, transaction))
        {
            lockCommand.Parameters.Add(new NpgsqlParameter<long> { TypedValue = CreateLockKey });
            await lockCommand.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        if (!await CheckAsync(connection, readOnly, server, cancellationToken).ConfigureAwait(false))
        {
            using (var create = new NpgsqlCommand(Create, connection, transaction))
            {
                await create.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            }

            using var seed = new NpgsqlCommand(Seed, connection, transaction);
            seed.Parameters.Add(new NpgsqlParameter<string> { TypedValue = Application });
            seed.Parameters.Add(new NpgsqlParameter<string> { TypedValue = Version.ToString(CultureInfo.InvariantCulture) });
            seed.Parameters.Add(new NpgsqlParameter<string> { TypedValue = nameof(BlockLayout.BlobHash) });
            await seed.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
        }

        await transaction.CommitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>True when BlockDb's schema is there and usable; false when the database holds none of its tables.</summary>
    private static async Task<bool> CheckAsync(NpgsqlConnection connection, bool readOnly, string server, CancellationToken cancellationToken)
    {
        bool hasSettings, hasTables;
        using (var probe = new NpgsqlCommand(Probe, connection))
        {
            var reader = await probe.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            (hasSettings, hasTables) = (reader.GetBoolean(0), reader.GetBoolean(1));
        }

        if (!hasSettings)
        {
            if (hasTables)
            {
                throw new BlockDbFormatException(
                    $"The database {Quoted.Value(server)} holds a \"Block\", \"Blockset\" or \"BlocksetEntry\" table without BlockDb's \"BlockDbSettings\": another application's schema. BlockDb leaves it untouched; point BlockDb at another database or schema (Search Path).");
            }

            return readOnly
                ? throw new BlockDbFormatException($"The database {Quoted.Value(server)} holds no BlockDb index, and BlockDb:ReadOnly = true cannot create one; open it once without ReadOnly.")
                : false;
        }

        var settings = new Dictionary<string, string>(StringComparer.Ordinal);
        using (var read = new NpgsqlCommand(ReadSettings, connection))
        {
            var reader = await read.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            await using var readerScope = reader.ConfigureAwait(false);
            while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false))
            {
                settings[reader.GetString(0)] = reader.GetString(1);
            }
        }

        Verify(settings, server);
        return true;
    }

    private static void Verify(Dictionary<string, string> settings, string server)
    {
        if (!settings.TryGetValue("Application", out var application) || application != Application)
        {
            throw new BlockDbFormatException($"The database {Quoted.Value(server)} has a \"BlockDbSettings\" table that is not BlockDb's (Application = {Quoted.Value(application)}); BlockDb leaves it untouched.");
        }

        if (!settings.TryGetValue("SchemaVersion", out var text) || !int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var version) || version < 1)
        {
            throw new BlockDbFormatException($"The database {Quoted.Value(server)} records BlockDb schema version {Quoted.Value(text)}, which is not a version; BlockDb leaves it untouched.");
        }

        if (version > Version)
        {
            throw new BlockDbFormatException($"The database {Quoted.Value(server)} was written by a newer BlockDb (schema version {version}; this build reads up to {Version}); upgrade BlockDb. The database is left untouched.");
        }

        if (!settings.TryGetValue("BlockLayout", out var layout) || layout != nameof(BlockLayout.BlobHash))
        {
            throw new BlockDbFormatException($"The database {Quoted.Value(server)} records the block layout {Quoted.Value(layout)}, which the PostgreSQL provider does not know (it writes {nameof(BlockLayout.BlobHash)}); BlockDb leaves it untouched.");
        }
    }
}
