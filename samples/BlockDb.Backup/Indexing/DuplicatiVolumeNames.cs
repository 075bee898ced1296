using System.Globalization;
using BlockDb.Backup.Cli;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// The name Duplicati gives a Blocks volume of a backup: <c>&lt;prefix&gt;-b&lt;32 hex&gt;.dblock.&lt;compression&gt;</c>,
/// then <c>.&lt;encryption&gt;</c> when the backup is encrypted (<c>VolumeBase.GenerateFilename</c>, a new
/// <c>Guid.ToString("N")</c> per volume; docs/DUPLICATI-FACTS.md §2). The parts come from the database's
/// <c>Configuration</c>: <c>prefix</c> (default <c>duplicati</c>), <c>compression-module</c> (default <c>zip</c>) and
/// <c>encryption-module</c>, used unless <c>passphrase</c> is <c>no-encryption</c>.
/// </summary>
/// <param name="Prefix">The backup's remote file prefix.</param>
/// <param name="Compression">The compression module's name (the file extension after <c>.dblock</c>).</param>
/// <param name="Encryption">The encryption module's name, or <see langword="null"/> for an unencrypted backup.</param>
internal sealed record DuplicatiVolumeNames(string Prefix, string Compression, string? Encryption)
{
    /// <summary>Duplicati's default <c>prefix</c>.</summary>
    public const string DefaultPrefix = "duplicati";

    /// <summary>Duplicati's default <c>compression-module</c>.</summary>
    public const string DefaultCompression = "zip";

    /// <summary>The <c>passphrase</c> value of a backup without encryption.</summary>
    private const string NoEncryption = "no-encryption";

    /// <summary>A new volume's name, with a new random 32-hex-digit identifier.</summary>
    public string Next() => Name(Guid.NewGuid());

    /// <summary>The name of the volume identified by <paramref name="id"/>.</summary>
    public string Name(Guid id) => string.Create(CultureInfo.InvariantCulture, $"{Prefix}-b{id:N}.dblock.{Compression}{(Encryption is null ? string.Empty : "." + Encryption)}");

    /// <summary>Reads the parts from a Duplicati database's <c>Configuration</c> rows.</summary>
    /// <param name="configuration">Key to value.</param>
    /// <returns>The names.</returns>
    /// <exception cref="UsageException">A <c>prefix</c> with a hyphen, which Duplicati refuses (<c>Controller.cs</c>: its volume name pattern ends the prefix at the first <c>-</c>); nothing was written.</exception>
    public static DuplicatiVolumeNames From(IReadOnlyDictionary<string, string> configuration)
    {
        var prefix = configuration.GetValueOrDefault("prefix") is { Length: > 0 } p ? p : DefaultPrefix;
        var compression = configuration.GetValueOrDefault("compression-module") is { Length: > 0 } c ? c : DefaultCompression;
        var encryption = configuration.GetValueOrDefault("encryption-module") is { Length: > 0 } e && configuration.GetValueOrDefault("passphrase") != NoEncryption ? e : null;
        if (prefix.Contains('-', StringComparison.Ordinal))
        {
            throw new UsageException(
                $"The Duplicati database's Configuration 'prefix' is '{prefix}': Duplicati refuses a prefix with a hyphen (its volume names end the prefix at the first '-'), so it could not read a volume named with it back. Nothing was written.");
        }

        return new DuplicatiVolumeNames(prefix, compression, encryption);
    }
}
