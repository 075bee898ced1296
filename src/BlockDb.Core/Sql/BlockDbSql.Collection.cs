using BlockDb.Drivers;

namespace BlockDb.Sql;

/// <summary>Garbage collection and the ID floors that keep collected IDs from being handed out again.</summary>
internal static partial class BlockDbSql
{
    /// <summary>The unreferenced blocks and their bytes per volume (NULL: blocks recorded without one), in volume order.</summary>
    public static readonly SqlStatement UnreferencedByVolume = new(
        nameof(UnreferencedByVolume),
        $"""SELECT B."VolumeID", COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE {Unreferenced} GROUP BY B."VolumeID" ORDER BY B."VolumeID" """);

    /// <summary>One volume's unreferenced blocks and their bytes.</summary>
    public static readonly SqlStatement UnreferencedInVolume = new(
        nameof(UnreferencedInVolume),
        $"""SELECT B."VolumeID", COUNT(*), COALESCE(SUM(B."Size"), 0) FROM "Block" B WHERE B."VolumeID" = @VolumeID AND {Unreferenced} GROUP BY B."VolumeID" """,
        "@VolumeID");

    /// <summary>Deletes every block no blockset references.</summary>
    public static readonly SqlStatement DeleteUnreferenced = new(
        nameof(DeleteUnreferenced), $"""DELETE FROM "Block" AS B WHERE {Unreferenced}""");

    /// <summary>Deletes one volume's blocks that no blockset references.</summary>
    public static readonly SqlStatement DeleteUnreferencedInVolume = new(
        nameof(DeleteUnreferencedInVolume), $"""DELETE FROM "Block" AS B WHERE B."VolumeID" = @VolumeID AND {Unreferenced}""", "@VolumeID");

    /// <summary>A block <c>B</c> that no blockset entry names.</summary>
    private const string Unreferenced = """NOT EXISTS (SELECT 1 FROM "BlocksetEntry" E WHERE E."BlockID" = B."ID")""";

    /// <summary>The collected high-water mark of block IDs: garbage collection and repair raise it, the indexed layouts' block inserts take it + 1 while it is above every ID.</summary>
    public static readonly IdFloorSql BlockIdFloor = new(IdFloorTable.Block);

    /// <summary>The deleted high-water mark of blockset IDs: <c>DeleteBlocksetAsync</c> raises it, <see cref="InsertBlockset"/> takes it + 1 while it is above every ID (every layout).</summary>
    public static readonly IdFloorSql BlocksetIdFloor = new(IdFloorTable.Blockset);

    /// <summary>The tables whose deleted IDs a SQLite file must never hand out again (their names, as in the schema).</summary>
    public enum IdFloorTable
    {
        /// <summary><c>"Block"</c>: a select-xor-insert result names a block until a blockset names it.</summary>
        Block,

        /// <summary><c>"Blockset"</c>: a <c>FindBlocksetAsync</c> or <c>AddBlocksetAsync</c> result names a file's content until the engine records it.</summary>
        Blockset,
    }

    /// <summary>
    /// One table's ID floor in a SQLite file. The tables have no <c>AUTOINCREMENT</c> (Duplicati's schema) and SQLite
    /// gives a new row the highest ID + 1 (<see href="https://www.sqlite.org/autoinc.html"/>), so deleting the row with
    /// the highest ID would hand its ID to the next new row, and an ID another session or process still holds would
    /// silently name other content. A deletion that lowers the highest ID records the old one as the table's floor
    /// (the <see cref="Setting"/> row of <c>BlockDbSettings</c>, only raised, in the deletion's transaction), and while
    /// the floor is above every ID an insert takes floor + 1. The statements are built from <see cref="IdFloorTable"/>
    /// names only, never from caller strings. PostgreSQL needs none: its IDs are identity columns, whose sequences never go back.
    /// </summary>
    public sealed class IdFloorSql
    {
        /// <summary>The statements of <paramref name="table"/>'s floor.</summary>
        public IdFloorSql(IdFloorTable table)
        {
            var name = table.ToString();
            Setting = SettingName(table);
            Highest = new($"Highest{name}Id", $"""SELECT COALESCE(MAX("ID"), 0) FROM "{name}" """);
            Raise = new(
                $"Raise{name}IdFloor",
                $"""INSERT INTO "BlockDbSettings" ("Name", "Value") SELECT '{Setting}', @Floor WHERE @Floor > (SELECT COALESCE(MAX("ID"), 0) FROM "{name}") ON CONFLICT ("Name") DO UPDATE SET "Value" = excluded."Value" WHERE CAST(excluded."Value" AS INTEGER) > CAST("Value" AS INTEGER)""",
                "@Floor");
            AboveMax = new($"{name}IdFloorAboveMax", AboveMaxQuery(table));
        }

        /// <summary>The <c>BlockDbSettings</c> row holding the floor: <c>CollectedBlockIdFloor</c>, <c>CollectedBlocksetIdFloor</c>.</summary>
        public string Setting { get; }

        /// <summary>The table's highest ID, 0 when it has no row.</summary>
        public SqlStatement Highest { get; }

        /// <summary>
        /// After a deletion in the table's transaction: raises the floor to <c>@Floor</c> (an ID the table held before
        /// the deletion) when it is above every ID left, never lowers it; no write otherwise.
        /// </summary>
        public SqlStatement Raise { get; }

        /// <summary>The floor when it is above every ID in the table; no row otherwise.</summary>
        public SqlStatement AboveMax { get; }

        /// <summary>
        /// An SQL expression for the <c>"ID"</c> of an insert into <paramref name="table"/>: floor + 1 while the floor
        /// is above every ID, else NULL (SQLite chooses the highest ID + 1). A function of constants, so a statement
        /// initialiser in any part of <see cref="BlockDbSql"/> can use it.
        /// </summary>
        public static string NextId(IdFloorTable table) => $"(({AboveMaxQuery(table)}) + 1)";

        private static string SettingName(IdFloorTable table) => $"Collected{table}IdFloor";

        private static string AboveMaxQuery(IdFloorTable table) =>
            $"""SELECT CAST("Value" AS INTEGER) FROM "BlockDbSettings" WHERE "Name" = '{SettingName(table)}' AND CAST("Value" AS INTEGER) > (SELECT COALESCE(MAX("ID"), 0) FROM "{table}")""";
    }
}
