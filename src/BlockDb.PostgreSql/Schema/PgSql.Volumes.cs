namespace BlockDb.PostgreSql.Schema;

// The volumes' statements: registration, state, moves, the volume listing. Values travel only as parameters.
internal static partial class PgSql
{
    /// <summary>
    /// Inserts a block recorded in volume <c>$3</c> unless it exists or the volume cannot receive blocks; returns the new
    /// ID (NULL when nothing was inserted) and the volume's state (NULL when there is no such volume).
    /// </summary>
    public const string InsertBlockInVolume = """
        WITH v AS (SELECT "State" FROM "Remotevolume" WHERE "ID" = $3),
        i AS (INSERT INTO "Block" ("Hash", "Size", "VolumeID") SELECT $1, $2, $3
              WHERE EXISTS (SELECT 1 FROM v WHERE "State" NOT IN ('Deleting', 'Deleted')) ON CONFLICT DO NOTHING RETURNING "ID")
        SELECT (SELECT "ID" FROM i), (SELECT "State" FROM v)
        """;

    /// <summary>Registers a volume; no row when the name is taken.</summary>
    public const string RegisterVolume = """INSERT INTO "Remotevolume" ("Name", "State") VALUES ($1, $2) ON CONFLICT ("Name") DO NOTHING RETURNING "ID" """;

    /// <summary>A volume's state.</summary>
    public const string VolumeState = """SELECT "State" FROM "Remotevolume" WHERE "ID" = $1""";

    /// <summary>A volume's state, its row locked until the transaction ends.</summary>
    public const string VolumeStateForUpdate = """SELECT "State" FROM "Remotevolume" WHERE "ID" = $1 FOR UPDATE""";

    /// <summary>Whether a volume holds a referenced block, and any block.</summary>
    public const string VolumeContents = """
        SELECT EXISTS (SELECT 1 FROM "Block" b WHERE b."VolumeID" = $1 AND EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID")),
               EXISTS (SELECT 1 FROM "Block" WHERE "VolumeID" = $1)
        """;

    /// <summary>Sets a volume's state, and its size when one is given.</summary>
    public const string SetVolumeState = """UPDATE "Remotevolume" SET "State" = $1, "Size" = coalesce($2, "Size") WHERE "ID" = $3""";

    /// <summary>Moves the listed blocks to volume <c>$2</c> only when every one exists; returns how many were listed (0 when none moved) and the 1-based position of the first unknown one.</summary>
    public const string MoveBlocks = """
        WITH k AS (SELECT * FROM unnest($1::bigint[]) WITH ORDINALITY AS k(id, i)),
        m AS (SELECT min(k.i) AS i FROM k LEFT JOIN "Block" b ON b."ID" = k.id WHERE b."ID" IS NULL),
        u AS (UPDATE "Block" b SET "VolumeID" = $2 FROM k WHERE b."ID" = k.id AND (SELECT i FROM m) IS NULL RETURNING 1)
        SELECT CASE WHEN (SELECT i FROM m) IS NULL THEN (SELECT count(*) FROM k) ELSE 0 END, (SELECT i FROM m)
        """;

    /// <summary>A volume <c>v</c> with its blocks and bytes, referenced or not.</summary>
    private const string VolumeColumns = """
        v."ID", v."Name", v."State", v."Size",
        (SELECT count(*) FROM "Block" b WHERE b."VolumeID" = v."ID"),
        (SELECT coalesce(sum(b."Size"), 0)::bigint FROM "Block" b WHERE b."VolumeID" = v."ID"),
        (SELECT count(*) FROM "Block" b WHERE b."VolumeID" = v."ID" AND NOT EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID")),
        (SELECT coalesce(sum(b."Size"), 0)::bigint FROM "Block" b WHERE b."VolumeID" = v."ID" AND NOT EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID"))
        """;

    /// <summary>A volume by ID.</summary>
    public const string GetVolume = $"""SELECT {VolumeColumns} FROM "Remotevolume" v WHERE v."ID" = $1""";

    /// <summary>A volume by name.</summary>
    public const string FindVolume = $"""SELECT {VolumeColumns} FROM "Remotevolume" v WHERE v."Name" = $1""";

    /// <summary>Every volume, in ID order.</summary>
    public const string EnumerateVolumes = $"""SELECT {VolumeColumns} FROM "Remotevolume" v ORDER BY v."ID" """;
}
