using System.Globalization;
using System.Security.Cryptography;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// A Duplicati local database as BlockDb found it when it opened it: recognised by Duplicati's own rule (exactly one
/// schema object named <c>version</c>, and its table at version <see cref="SupportedVersion"/>), its 19 tables and the
/// <c>File</c> view with exactly Duplicati's columns, the four indexes BlockDb's correctness rests on, and the block
/// size and hash algorithms from <c>Configuration</c> (docs/DUPLICATI-FACTS.md §1.1-1.4, §3). Reading it writes nothing.
/// Immutable.
/// </summary>
/// <param name="Blocksize">Configuration's <c>blocksize</c>, in bytes (at least 1024).</param>
/// <param name="BlockHash">The block hash algorithm (<c>blockhash</c>).</param>
/// <param name="BlockHashName">The block hash algorithm as Configuration names it.</param>
/// <param name="FileHash">The file hash algorithm (<c>filehash</c>).</param>
/// <param name="FileHashName">The file hash algorithm as Configuration names it.</param>
/// <param name="Indexes">The names of Duplicati's indexes the file has (letter case ignored); the required ones always among them.</param>
internal sealed partial record DuplicatiFile(int Blocksize, HashAlgorithmName BlockHash, string BlockHashName, HashAlgorithmName FileHash, string FileHashName, IReadOnlySet<string> Indexes)
{
    /// <summary>The Duplicati schema version this build works on (Duplicati's schema as read at 66cfb242).</summary>
    public const int SupportedVersion = 19;

    /// <summary>Duplicati's smallest block size (<c>Options.cs</c> 1310-1320).</summary>
    public const int MinimumBlocksize = 1024;

    /// <summary>The index on <c>DeletedBlock</c> (Hash, Size) that some 2025 canary files lack (facts §1.4); without it a take-back scans.</summary>
    public const string DeletedBlockHashSize = "DeletedBlockHashSize";

    /// <summary>The block hash size in bytes.</summary>
    public int BlockHashSize => HashSize(BlockHash);

    /// <summary>The file hash size in bytes.</summary>
    public int FileHashSize => HashSize(FileHash);

    /// <summary>Hashes per blocklist block: <c>blocksize / hashsize</c>, integer division (facts §5).</summary>
    public int HashesPerBlocklist => Blocksize / BlockHashSize;

    /// <summary>The hash algorithms Duplicati names in <c>blockhash</c> and <c>filehash</c> (<c>HashFactory.cs</c> 56-82).</summary>
    private static readonly (string Name, HashAlgorithmName Algorithm, int Size)[] HashNames =
    [
        ("SHA256", HashAlgorithmName.SHA256, 32),
        ("SHA1", HashAlgorithmName.SHA1, 20),
        ("MD5", HashAlgorithmName.MD5, 16),
        ("SHA384", HashAlgorithmName.SHA384, 48),
        ("SHA512", HashAlgorithmName.SHA512, 64),
    ];

    /// <summary>The size in bytes of a hash Duplicati can use.</summary>
    public static int HashSize(HashAlgorithmName algorithm) => HashNames.First(h => h.Algorithm == algorithm).Size;

    /// <summary>
    /// Recognises a Duplicati local database, inside the caller's read transaction; writes nothing.
    /// </summary>
    /// <param name="connection">A connection to the file, in a read transaction.</param>
    /// <param name="path">The file, for messages.</param>
    /// <returns>The file, or <see langword="null"/> when no schema object is named <c>version</c> (not a Duplicati file).</returns>
    /// <exception cref="DuplicatiSchemaVersionException">A Duplicati file at another schema version.</exception>
    /// <exception cref="BlockDbFormatException">
    /// More than one object named <c>version</c>; a <c>version</c> object that is not Duplicati's table; a table, column or
    /// the view missing or shaped otherwise (a half-finished upgrade); a required index missing or not unique; a
    /// <c>Configuration</c> without a valid <c>blocksize</c>, <c>blockhash</c> or <c>filehash</c>.
    /// </exception>
    public static DuplicatiFile? Recognize(ISqliteConnection connection, string path)
    {
        var named = ReadLong(connection, BlockDbSql.DuplicatiVersionObjects) ?? 0;
        if (named == 0)
        {
            return null;
        }

        var file = Quoted.Path(path);
        if (named > 1)
        {
            throw new BlockDbFormatException(
                $"{file} has {named} schema objects named 'version' (in any letter case); a Duplicati local database has exactly one, its Version table, and Duplicati refuses such a file too (DatabaseFormatError). Drop the extra object with the tool that added it.");
        }

        if (ReadLong(connection, BlockDbSql.DuplicatiVersionIsTable) != 1)
        {
            throw new BlockDbFormatException(
                $"{file} has a schema object named 'version' that is not Duplicati's Version table (a table with a Version column), and no application_id BlockDb knows; BlockDb opens its own files, empty files and Duplicati local databases (schema {SupportedVersion}) only.");
        }

        var version = ReadLong(connection, BlockDbSql.DuplicatiVersion) ?? -1;
        if (version != SupportedVersion)
        {
            throw new DuplicatiSchemaVersionException(
                version < SupportedVersion
                    ? $"{file} is a Duplicati local database at schema version {version}; BlockDb works on version {SupportedVersion} (Duplicati's schema as read at 66cfb242). Open it once with a current Duplicati, which upgrades it (and keeps a copy), then with BlockDb."
                    : $"{file} is a Duplicati local database at schema version {version}, written by a newer Duplicati than this BlockDb knows (it works on version {SupportedVersion}); use a BlockDb that supports version {version}.",
                version,
                SupportedVersion);
        }

        CheckShape(connection, file);
        var indexes = CheckIndexes(connection, file);
        var configuration = ReadConfiguration(connection, file);
        var (blockHash, blockHashName) = Hash(configuration, "blockhash", file);
        var (fileHash, fileHashName) = Hash(configuration, "filehash", file);
        return new DuplicatiFile(ReadBlocksize(configuration, file), blockHash, blockHashName, fileHash, fileHashName, indexes);
    }

    private static Dictionary<string, string?> ReadConfiguration(ISqliteConnection connection, string file)
    {
        var rows = new Dictionary<string, string?>(StringComparer.Ordinal);
        using (var read = connection.Prepare(BlockDbSql.DuplicatiConfiguration))
        {
            while (read.Step())
            {
                rows[read.ColumnText(0) ?? string.Empty] = read.ColumnText(1);
            }

            read.Reset();
        }

        if (rows.Count == 0)
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database that has never been used: its Configuration table is empty, so its block size and hash algorithms are not known yet. Duplicati writes them at the start of its first backup; open the file with BlockDb after that point. Nothing was changed.");
        }

        return rows;
    }

    private static int ReadBlocksize(Dictionary<string, string?> configuration, string file)
    {
        if (!configuration.TryGetValue("blocksize", out var text))
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration has no 'blocksize' row, yet it has been used (Duplicati writes blocksize, blockhash and filehash together at its first backup); BlockDb needs the block size. Let Duplicati repair or recreate the database. Nothing was changed.");
        }

        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var blocksize) || blocksize < MinimumBlocksize)
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration 'blocksize' is {Quoted.Value(text)}; allowed: a whole number of bytes from {MinimumBlocksize} to {int.MaxValue}, in decimal, as Duplicati writes it. Nothing was changed.");
        }

        return blocksize;
    }

    private static (HashAlgorithmName Algorithm, string Name) Hash(Dictionary<string, string?> configuration, string key, string file)
    {
        if (!configuration.TryGetValue(key, out var text))
        {
            throw new BlockDbFormatException(
                $"{file} is a Duplicati local database whose Configuration has no {Quoted.Value(key)} row, yet it has been used; BlockDb needs the hash algorithm. Allowed values: {string.Join(", ", HashNames.Select(h => h.Name))}. Nothing was changed.");
        }

        foreach (var (name, algorithm, _) in HashNames)
        {
            if (string.Equals(name, text, StringComparison.OrdinalIgnoreCase))
            {
                return (algorithm, text!);
            }
        }

        throw new BlockDbFormatException(
            $"{file} is a Duplicati local database whose Configuration {Quoted.Value(key)} is {Quoted.Value(text)}; allowed: {string.Join(", ", HashNames.Select(h => h.Name))} (Duplicati's HashFactory names). Nothing was changed.");
    }

    private static long? ReadLong(ISqliteConnection connection, string sql) =>
        connection.QueryText(sql) is { } text && long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) ? value : null;
}
