using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>
/// What BlockDb reads to recognise a Duplicati local database (docs/DUPLICATI-FACTS.md §1.1-1.4, §3). Names are compared
/// without regard to letter case, as SQLite and Duplicati's upgrader compare them; every value is a parameter.
/// </summary>
internal static partial class BlockDbSql
{
    /// <summary>How many schema objects are named <c>version</c> in any letter case: Duplicati's own test of a file (<c>DatabaseUpgrader.cs</c> 200-231).</summary>
    public const string DuplicatiVersionObjects = "SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE 'version'";

    /// <summary>Whether the one object named <c>version</c> is a table with a column <c>Version</c> (1 or 0).</summary>
    public const string DuplicatiVersionIsTable =
        """SELECT EXISTS (SELECT 1 FROM sqlite_schema S, pragma_table_info(S.name) C WHERE S.name LIKE 'version' AND S.type = 'table' AND C.name = 'Version' COLLATE NOCASE)""";

    /// <summary>The file's Duplicati schema version, as Duplicati reads it (NULL when the table is empty).</summary>
    public const string DuplicatiVersion = """SELECT max("Version") FROM "Version" """;

    /// <summary>The type (<c>table</c> or <c>view</c>) of the object named <c>@Name</c>; no row when there is none.</summary>
    public static readonly SqlStatement DuplicatiObjectType = new(
        nameof(DuplicatiObjectType), """SELECT type FROM sqlite_schema WHERE name = @Name COLLATE NOCASE AND type IN ('table', 'view')""", "@Name");

    /// <summary>The columns of table or view <c>@Name</c>: name, declared type, NOT NULL, primary-key position.</summary>
    public static readonly SqlStatement DuplicatiColumns = new(
        nameof(DuplicatiColumns), """SELECT name, type, "notnull", pk FROM pragma_table_info(@Name)""", "@Name");

    /// <summary>Whether index <c>@Index</c> of table <c>@Table</c> is unique and not partial: a row (unique, partial), or none when it does not exist.</summary>
    public static readonly SqlStatement DuplicatiIndex = new(
        nameof(DuplicatiIndex), """SELECT "unique", partial FROM pragma_index_list(@Table) WHERE name = @Index COLLATE NOCASE""", "@Table", "@Index");

    /// <summary>The columns of index <c>@Index</c>, in order.</summary>
    public static readonly SqlStatement DuplicatiIndexColumns = new(
        nameof(DuplicatiIndexColumns), """SELECT name FROM pragma_index_info(@Index) ORDER BY seqno""", "@Index");

    /// <summary>Every index name of the file.</summary>
    public static readonly SqlStatement DuplicatiIndexNames = new(
        nameof(DuplicatiIndexNames), """SELECT name FROM sqlite_schema WHERE type = 'index'""");

    /// <summary>Duplicati's persisted options (<c>LocalDatabase.GetDbOptionsAsync</c>): key and value.</summary>
    public static readonly SqlStatement DuplicatiConfiguration = new(
        nameof(DuplicatiConfiguration), """SELECT "Key", "Value" FROM "Configuration" """);

    /// <summary>A row when the file has an index named <c>@Name</c> (letter case ignored), none otherwise.</summary>
    public static readonly SqlStatement DuplicatiIndexExists = new(
        nameof(DuplicatiIndexExists), """SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = @Name COLLATE NOCASE""", "@Name");

    /// <summary>
    /// Exclusive locking for <see cref="DuplicatiUpgrade"/>: in WAL mode a connection that has read the file once keeps a
    /// shared lock on it until it closes, so the first transaction after this pragma gets the file only when no other
    /// connection that has read it is open (Duplicati reads its Version table at open)
    /// (<see href="https://www.sqlite.org/pragma.html#pragma_locking_mode"/>).
    /// </summary>
    public const string LockingModeExclusive = "PRAGMA locking_mode = EXCLUSIVE";
}
