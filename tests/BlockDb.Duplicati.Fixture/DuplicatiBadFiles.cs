using System.Globalization;
using Microsoft.Data.Sqlite;

namespace BlockDb.Duplicati.Fixture;

/// <summary>Which half of an upgrade a half-upgraded file lacks.</summary>
public enum HalfUpgrade
{
    /// <summary>Script 19 did not run but <c>Version</c> says 19: <c>Metadataset.Content</c> is missing.</summary>
    MetadatasetContentMissing,

    /// <summary>Script 18 did not run but <c>Version</c> says 19: <c>Remotevolume.LockExpirationTime</c> is missing.</summary>
    RemotevolumeLockExpirationTimeMissing,

    /// <summary>A script stopped between creating and filling a table: the <c>Version</c> row says 19, <c>ChangeJournalData</c> (script 8) is missing.</summary>
    ChangeJournalDataMissing,
}

/// <summary>
/// Files a library must refuse (issue 24, "Bad input"), made from a good one: an unsupported version number, a
/// half-upgraded file (a column or table missing while <c>Version</c> says 19), a <c>Configuration</c> without
/// <c>blocksize</c>, a second object named <c>version</c> (which makes Duplicati itself refuse the file).
/// </summary>
public static class DuplicatiBadFiles
{
    /// <summary>A new file whose <c>Version</c> row holds <paramref name="version"/> (schema otherwise v19).</summary>
    /// <param name="path">A path where no file exists.</param>
    /// <param name="version">The version number to write, e.g. 18 or 20.</param>
    public static void CreateWithVersion(string path, int version)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        Run(path, $"""UPDATE "Version" SET "Version" = {version.ToString(CultureInfo.InvariantCulture)}""");
    }

    /// <summary>A new file that says version 19 but lacks what one upgrade script adds.</summary>
    /// <param name="path">A path where no file exists.</param>
    /// <param name="kind">What is missing.</param>
    public static void CreateHalfUpgraded(string path, HalfUpgrade kind)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        Run(path, kind switch
        {
            HalfUpgrade.MetadatasetContentMissing => """ALTER TABLE "Metadataset" DROP COLUMN "Content" """,
            HalfUpgrade.RemotevolumeLockExpirationTimeMissing => """ALTER TABLE "Remotevolume" DROP COLUMN "LockExpirationTime" """,
            HalfUpgrade.ChangeJournalDataMissing => """DROP TABLE "ChangeJournalData" """,
            _ => throw new ArgumentOutOfRangeException(nameof(kind)),
        });
    }

    /// <summary>A new file whose Configuration holds every key a backup writes except <c>blocksize</c>.</summary>
    /// <param name="path">A path where no file exists.</param>
    public static void CreateWithoutBlocksize(string path)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        Run(path, """DELETE FROM "Configuration" WHERE "Key" = 'blocksize'""");
    }

    /// <summary>A new file with a second object named <c>version</c> in another letter case, which Duplicati's upgrader refuses ("DatabaseFormatError").</summary>
    /// <param name="path">A path where no file exists.</param>
    public static void CreateWithSecondVersionObject(string path)
    {
        DuplicatiSchema.CreateFile(path, configuration: new DuplicatiConfiguration());
        // Tables, views and indexes share one name space; triggers have their own, so a trigger can be named so.
        Run(path, """CREATE TRIGGER "version" AFTER INSERT ON "LogData" BEGIN SELECT 1; END""");
    }

    private static void Run(string path, string sql)
    {
        using var connection = DuplicatiConnection.Open(path);
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }
}
