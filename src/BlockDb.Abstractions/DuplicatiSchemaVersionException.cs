namespace BlockDb;

/// <summary>
/// The file is a Duplicati local database (its <c>Version</c> table), but at a schema version this build does not work on:
/// an older one (open it once with a current Duplicati, which upgrades it), or a newer one (written by a newer Duplicati
/// than this BlockDb knows). Raised when opening; the file is left untouched. Duplicati reads its version the same way
/// (<see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/SQLiteHelper/DatabaseUpgrader.cs"/>).
/// </summary>
public sealed class DuplicatiSchemaVersionException : BlockDbFormatException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What was found and what this build accepts.</param>
    /// <param name="foundVersion">The file's version (<c>max("Version")</c> of its <c>Version</c> table; −1 when the table is empty).</param>
    /// <param name="supportedVersion">The version this build works on.</param>
    public DuplicatiSchemaVersionException(string message, long foundVersion, int supportedVersion)
        : base(message)
    {
        FoundVersion = foundVersion;
        SupportedVersion = supportedVersion;
    }

    /// <summary>The file's Duplicati schema version (−1 when its <c>Version</c> table holds no row).</summary>
    public long FoundVersion { get; }

    /// <summary>The Duplicati schema version this build works on (19).</summary>
    public int SupportedVersion { get; }
}
