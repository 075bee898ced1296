using System.Globalization;
using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture;

/// <summary>
/// The options a Duplicati backup persists in <c>Configuration</c> (facts §3; <c>Duplicati/Library/Main/Utility.cs</c>
/// 52-71, 179-252): <c>prefix</c>, <c>blocksize</c> (decimal bytes), <c>blockhash</c>, <c>filehash</c>,
/// <c>dblock-size</c> (decimal bytes), <c>compression-module</c> and, for an unencrypted backup, <c>passphrase</c> =
/// <c>no-encryption</c>.
/// </summary>
public sealed record DuplicatiConfiguration
{
    /// <summary>Block size in bytes (Duplicati's default 1 MiB; at least 1024).</summary>
    public int Blocksize { get; init; } = DuplicatiConstants.DefaultBlocksize;

    /// <summary>The block hash algorithm's name (default SHA256).</summary>
    public string BlockHash { get; init; } = "SHA256";

    /// <summary>The file hash algorithm's name (default SHA256).</summary>
    public string FileHash { get; init; } = "SHA256";

    /// <summary>Remote volume size in bytes (default 50 MiB): a block volume is closed once it holds more than this less one block.</summary>
    public long VolumeSize { get; init; } = DuplicatiConstants.DefaultVolumeSize;

    /// <summary>Remote file name prefix (default <c>duplicati</c>).</summary>
    public string Prefix { get; init; } = "duplicati";

    /// <summary>The block hash size in bytes.</summary>
    public int HashSize => DuplicatiHash.SizeOf(BlockHash);

    /// <summary>Hashes per blocklist block: <c>blocksize / hashsize</c>, integer division (32768 for the defaults).</summary>
    public int HashesPerBlocklist => Blocksize / HashSize;

    /// <summary>The rows Duplicati writes for these options.</summary>
    /// <returns>Key to value.</returns>
    public IReadOnlyDictionary<string, string> Rows() => new Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["prefix"] = Prefix,
        ["blocksize"] = Blocksize.ToString(CultureInfo.InvariantCulture),
        ["blockhash"] = BlockHash,
        ["filehash"] = FileHash,
        ["dblock-size"] = VolumeSize.ToString(CultureInfo.InvariantCulture),
        ["compression-module"] = "zip",
        ["passphrase"] = "no-encryption",
    };

    /// <summary>Writes the rows as Duplicati's <c>SetDbOptionsAsync</c> does: every row deleted, then all inserted again.</summary>
    /// <param name="connection">An open connection.</param>
    /// <param name="transaction">The connection's open transaction.</param>
    public void Write(SqliteConnection connection, SqliteTransaction transaction) => WriteRows(connection, transaction, Rows());

    /// <summary>Replaces the whole Configuration table with <paramref name="rows"/>, as <c>SetDbOptionsAsync</c> does.</summary>
    /// <param name="connection">An open connection.</param>
    /// <param name="transaction">The connection's open transaction.</param>
    /// <param name="rows">Key to value.</param>
    public static void WriteRows(SqliteConnection connection, SqliteTransaction transaction, IReadOnlyDictionary<string, string> rows)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(rows);
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """DELETE FROM "Configuration" """;
        command.ExecuteNonQuery();
        command.CommandText = """INSERT INTO "Configuration" ("Key", "Value") VALUES (@Key, @Value)""";
        var key = command.Parameters.Add("@Key", SqliteType.Text);
        var value = command.Parameters.Add("@Value", SqliteType.Text);
        foreach (var (k, v) in rows)
        {
            key.Value = k;
            value.Value = v;
            command.ExecuteNonQuery();
        }
    }

    /// <summary>Reads every Configuration row (Duplicati's <c>GetDbOptionsAsync</c>).</summary>
    /// <param name="connection">An open connection.</param>
    /// <param name="transaction">The connection's open transaction, if any.</param>
    /// <returns>Key to value.</returns>
    public static Dictionary<string, string> ReadRows(SqliteConnection connection, SqliteTransaction? transaction)
    {
        ArgumentNullException.ThrowIfNull(connection);
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = """SELECT "Key", "Value" FROM "Configuration" """;
        var rows = new Dictionary<string, string>(StringComparer.Ordinal);
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            rows[reader.GetString(0)] = reader.GetString(1);
        }

        return rows;
    }
}
