using System.Security.Cryptography;

namespace BlockDb.Duplicati.Fixture;

/// <summary>
/// <c>Remotevolume.Type</c>: Duplicati stores the enum name as text (<c>RemoteVolumeType</c>,
/// <c>Duplicati/Library/Main/Enums.cs</c>); the order is Duplicati's, the numbers are never stored.
/// </summary>
public enum DuplicatiVolumeType
{
    /// <summary><c>Blocks</c>: a dblock volume holding block data.</summary>
    Blocks,

    /// <summary><c>Files</c>: a dlist volume, one per fileset.</summary>
    Files,

    /// <summary><c>Index</c>: a dindex volume describing one dblock volume.</summary>
    Index,
}

/// <summary>
/// <c>Remotevolume.State</c>: Duplicati stores the enum name as text (<c>RemoteVolumeState</c>, Enums.cs 85-118) and
/// parses it back with <c>Enum.Parse</c>, so any other text makes it throw. The order (and so the numbers, which
/// Microsoft.Data.Sqlite binds when an enum value is passed as a parameter) is Duplicati's.
/// </summary>
public enum DuplicatiVolumeState
{
    /// <summary>Registered, being filled.</summary>
    Temporary,

    /// <summary>Closed, upload started.</summary>
    Uploading,

    /// <summary>Upload finished.</summary>
    Uploaded,

    /// <summary>Seen in a remote listing with the right size.</summary>
    Verified,

    /// <summary>To be deleted remotely.</summary>
    Deleting,

    /// <summary>Deleted remotely; the row stays until its delete grace time has passed.</summary>
    Deleted,
}

/// <summary>Constants of Duplicati's local database that the fixture, its replay and its oracle share.</summary>
public static class DuplicatiConstants
{
    /// <summary>The schema version this fixture builds and accepts (<c>Version.Version</c>).</summary>
    public const int SchemaVersion = 19;

    /// <summary><c>FileLookup.BlocksetID</c> of a folder (<c>LocalDatabase.FOLDER_BLOCKSET_ID</c>).</summary>
    public const long FolderBlocksetId = -100;

    /// <summary><c>FileLookup.BlocksetID</c> of a symbolic link (<c>LocalDatabase.SYMLINK_BLOCKSET_ID</c>).</summary>
    public const long SymlinkBlocksetId = -200;

    /// <summary>Duplicati's default block size: 1 MiB (option <c>blocksize</c>, default <c>1mb</c>).</summary>
    public const int DefaultBlocksize = 1 << 20;

    /// <summary>Duplicati's default remote volume size: 50 MiB (option <c>dblock-size</c>, default <c>50mb</c>).</summary>
    public const long DefaultVolumeSize = 50L << 20;

    /// <summary>Duplicati's smallest accepted block size, in bytes.</summary>
    public const int MinimumBlocksize = 1024;

    /// <summary>The grace period Duplicati gives a volume it has just deleted remotely.</summary>
    public static readonly TimeSpan DeletedVolumeGrace = TimeSpan.FromHours(2);

    /// <summary>Epoch seconds of a UTC time, as Duplicati stores times (<c>NormalizeDateTimeToEpochSeconds</c>).</summary>
    /// <param name="utc">A UTC time.</param>
    /// <returns>Whole seconds since 1970-01-01 UTC.</returns>
    public static long EpochSeconds(DateTime utc) => (long)Math.Floor((utc.ToUniversalTime() - DateTime.UnixEpoch).TotalSeconds);
}

/// <summary>The hash algorithms Duplicati names in <c>Configuration.blockhash</c>/<c>filehash</c> (<c>HashFactory.cs</c> 56-82).</summary>
public static class DuplicatiHash
{
    /// <summary>The hash size in bytes of an algorithm name.</summary>
    /// <param name="name">SHA256, SHA1, MD5, SHA384 or SHA512 (any letter case).</param>
    /// <returns>32, 20, 16, 48 or 64.</returns>
    /// <exception cref="ArgumentException">Another name.</exception>
    public static int SizeOf(string name) => name.ToUpperInvariant() switch
    {
        "SHA256" => 32,
        "SHA1" => 20,
        "MD5" => 16,
        "SHA384" => 48,
        "SHA512" => 64,
        _ => throw new ArgumentException($"Unknown Duplicati hash algorithm '{name}' (SHA256, SHA1, MD5, SHA384 or SHA512).", nameof(name)),
    };

    /// <summary>Hashes bytes with an algorithm named as Duplicati names it.</summary>
    /// <param name="name">SHA256, SHA1, MD5, SHA384 or SHA512.</param>
    /// <param name="data">The bytes.</param>
    /// <param name="destination">At least <see cref="SizeOf"/> bytes.</param>
    /// <returns>The hash size written.</returns>
    public static int Hash(string name, ReadOnlySpan<byte> data, Span<byte> destination) => name.ToUpperInvariant() switch
    {
        "SHA256" => SHA256.HashData(data, destination),
#pragma warning disable CA5350, CA5351 // Duplicati lets a backup use them; the fixture must be able to check such a file.
        "SHA1" => SHA1.HashData(data, destination),
        "MD5" => MD5.HashData(data, destination),
#pragma warning restore CA5350, CA5351
        "SHA384" => SHA384.HashData(data, destination),
        "SHA512" => SHA512.HashData(data, destination),
        _ => throw new ArgumentException($"Unknown Duplicati hash algorithm '{name}' (SHA256, SHA1, MD5, SHA384 or SHA512).", nameof(name)),
    };

    /// <summary>An incremental hasher for an algorithm named as Duplicati names it.</summary>
    /// <param name="name">SHA256, SHA1, MD5, SHA384 or SHA512.</param>
    /// <returns>The hasher; the caller disposes it.</returns>
    public static IncrementalHash Incremental(string name) => IncrementalHash.CreateHash(name.ToUpperInvariant() switch
    {
        "SHA256" => HashAlgorithmName.SHA256,
        "SHA1" => HashAlgorithmName.SHA1,
        "MD5" => HashAlgorithmName.MD5,
        "SHA384" => HashAlgorithmName.SHA384,
        "SHA512" => HashAlgorithmName.SHA512,
        _ => throw new ArgumentException($"Unknown Duplicati hash algorithm '{name}' (SHA256, SHA1, MD5, SHA384 or SHA512).", nameof(name)),
    });
}
