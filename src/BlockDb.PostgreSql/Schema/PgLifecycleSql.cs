namespace BlockDb.PostgreSql.Schema;

/// <summary>
/// The lifecycle's statements on the server: volumes, blockset deletion, garbage collection, the lifecycle lock and the
/// enumerations. Values travel only as parameters.
/// </summary>
/// <remarks>
/// The lifecycle lock is a transaction-level advisory lock (<see href="https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS"/>)
/// keyed by the schema: writes that make blocks referenced or record them into a volume take it shared; garbage
/// collection, volume state changes and block moves take it exclusive. It is taken by a statement of its own before the
/// statement it protects, so that statement's snapshot (READ COMMITTED takes one per statement) sees everything the
/// other side committed: a collection never deletes a block a blockset being added names, and a volume goes
/// <c>Deleting</c> only when no blockset references its blocks.
/// </remarks>
internal static class PgLifecycleSql
{
    /// <summary>The lifecycle lock, shared.</summary>
    public const string LockShared = "SELECT pg_advisory_xact_lock_shared(1112297284, hashtext(current_schema()))";

    /// <summary>The lifecycle lock, exclusive.</summary>
    public const string LockExclusive = "SELECT pg_advisory_xact_lock(1112297284, hashtext(current_schema()))";

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

    /// <summary>A block's hash, size and volume.</summary>
    public const string GetBlock = """SELECT "Hash", "Size", "VolumeID" FROM "Block" WHERE "ID" = $1""";

    /// <summary>The lowest blockset ID with a full hash and a length.</summary>
    public const string FindBlockset = """SELECT "ID" FROM "Blockset" WHERE "FullHash" = $1 AND "Length" = $2 ORDER BY "ID" LIMIT 1""";

    /// <summary>Deletes a blockset and its entries in one statement; returns its ID, or no row when there is none.</summary>
    public const string DeleteBlockset = """
        WITH s AS (DELETE FROM "Blockset" WHERE "ID" = $1 RETURNING "ID"),
        e AS (DELETE FROM "BlocksetEntry" WHERE "BlocksetID" IN (SELECT "ID" FROM s))
        SELECT "ID" FROM s
        """;

    /// <summary>Deletes the unreferenced blocks (all, or volume <c>$1</c>'s) and returns what went, per volume.</summary>
    public const string Collect = """
        WITH c AS (DELETE FROM "Block" b WHERE ($1::bigint IS NULL OR b."VolumeID" = $1)
                   AND NOT EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID") RETURNING b."VolumeID", b."Size")
        SELECT "VolumeID", count(*), coalesce(sum("Size"), 0)::bigint FROM c GROUP BY "VolumeID" ORDER BY "VolumeID" NULLS FIRST
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

    /// <summary>Blocks in ID order, optionally of volume <c>$1</c> and optionally only unreferenced ones (<c>$2</c>).</summary>
    public const string EnumerateBlocks = """
        SELECT b."ID", b."Hash", b."Size", b."VolumeID" FROM "Block" b
        WHERE ($1::bigint IS NULL OR b."VolumeID" = $1) AND (NOT $2::boolean OR NOT EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID"))
        ORDER BY b."ID"
        """;

    /// <summary>Every blockset with its length, full hash and entry count, in ID order.</summary>
    public const string EnumerateBlocksets = """
        SELECT s."ID", s."Length", s."FullHash", (SELECT count(*) FROM "BlocksetEntry" e WHERE e."BlocksetID" = s."ID") FROM "Blockset" s ORDER BY s."ID"
        """;
}
