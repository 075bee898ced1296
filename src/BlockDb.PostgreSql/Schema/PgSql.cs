namespace BlockDb.PostgreSql.Schema;

/// <summary>
/// Every statement the provider sends, in one place. Values travel only as parameters (<c>$1</c>, <c>$2</c>, ...);
/// no SQL text is built from input. Table and column names are Duplicati's (<c>Block</c>, <c>Blockset</c>,
/// <c>BlocksetEntry</c>), quoted because PostgreSQL folds unquoted names to lower case.
/// </summary>
internal static partial class PgSql
{
    /// <summary>The block's ID by hash and size (the unique index <c>BlockHashSize</c>).</summary>
    public const string FindBlock = """SELECT "ID" FROM "Block" WHERE "Hash" = $1 AND "Size" = $2""";

    /// <summary>
    /// Inserts a block unless it exists. <c>ON CONFLICT DO NOTHING</c> waits for a concurrent insert of the same key to
    /// commit or abort, so two writers never both insert it
    /// (<see href="https://www.postgresql.org/docs/current/sql-insert.html#SQL-ON-CONFLICT"/>); no row comes back when
    /// it existed.
    /// </summary>
    public const string InsertBlock = """INSERT INTO "Block" ("Hash", "Size") VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING "ID" """;

    /// <summary>As <see cref="InsertBlock"/> without <c>RETURNING</c> (the InsertOrIgnoreThenSelect strategy: the affected-row count says whether it inserted).</summary>
    public const string InsertBlockIgnore = """INSERT INTO "Block" ("Hash", "Size") VALUES ($1, $2) ON CONFLICT DO NOTHING""";

    /// <summary>
    /// The IDs of many blocks, one row per block of the two arrays (<c>$1</c> hashes, <c>$2</c> sizes) in their order
    /// (NULL for a block not in the index), each with the state of volume <c>$3</c> (NULL when none was named or there is
    /// no such volume). <c>unnest</c> over arrays of equal length gives one row per position
    /// (<see href="https://www.postgresql.org/docs/current/functions-array.html"/>).
    /// </summary>
    public const string FindBlocks = """
        SELECT b."ID", (SELECT v."State" FROM "Remotevolume" v WHERE v."ID" = $3::bigint)
        FROM unnest($1::bytea[], $2::bigint[]) WITH ORDINALITY AS k(h, s, i) LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s
        ORDER BY k.i
        """;

    /// <summary>
    /// Inserts those of many blocks (<c>$1</c> hashes, <c>$2</c> sizes; each once however often it is listed) that are not
    /// in the index, recorded in volume <c>$3</c> (or none when NULL), and only when that volume can receive blocks (it
    /// exists and is not <c>Deleting</c> or <c>Deleted</c>); returns the new IDs. In (hash, size) order, so two writers
    /// inserting overlapping sets wait for each other in one order and do not deadlock inside this statement. <c>ON
    /// CONFLICT DO NOTHING</c> makes a block a concurrent writer inserts first a row not returned, as in
    /// <see cref="InsertBlock"/>; the <c>NOT EXISTS</c> only spares known blocks the speculative insert (and an identity
    /// value). <see cref="FindBlocks"/> after it, in a new snapshot, gives every ID.
    /// </summary>
    public const string InsertBlocks = """
        INSERT INTO "Block" ("Hash", "Size", "VolumeID")
        SELECT k.h, k.s, $3::bigint FROM (SELECT DISTINCT h, s FROM unnest($1::bytea[], $2::bigint[]) AS u(h, s)) k
        WHERE NOT EXISTS (SELECT 1 FROM "Block" b WHERE b."Hash" = k.h AND b."Size" = k.s)
          AND ($3::bigint IS NULL OR EXISTS (SELECT 1 FROM "Remotevolume" v WHERE v."ID" = $3::bigint AND v."State" NOT IN ('Deleting', 'Deleted')))
        ORDER BY k.h, k.s
        ON CONFLICT DO NOTHING RETURNING "ID"
        """;

    /// <summary>The rows of <c>Block</c>, <c>Blockset</c> and <c>BlocksetEntry</c>.</summary>
    public const string Counts = """SELECT (SELECT count(*) FROM "Block"), (SELECT count(*) FROM "Blockset"), (SELECT count(*) FROM "BlocksetEntry")""";

    /// <summary>Up to $3 of a blockset's blocks from index $2 on, in order (a listing into the caller's buffer).</summary>
    public const string ListBlocksetBlocksFrom = """
        SELECT e."Index", b."ID", b."Hash", b."Size" FROM "BlocksetEntry" e JOIN "Block" b ON b."ID" = e."BlockID"
        WHERE e."BlocksetID" = $1 AND e."Index" >= $2 ORDER BY e."Index" LIMIT $3
        """;

    /// <summary>Whether a blockset exists (for a blockset whose list came back empty).</summary>
    public const string BlocksetExists = """SELECT 1 FROM "Blockset" WHERE "ID" = $1""";

    /// <summary>A blockset's length, full hash and entry count.</summary>
    public const string GetBlockset = """
        SELECT s."Length", s."FullHash", (SELECT count(*) FROM "BlocksetEntry" e WHERE e."BlocksetID" = s."ID") FROM "Blockset" s WHERE s."ID" = $1
        """;

    /// <summary>
    /// A file's blockset from its blocks' hashes and sizes, in one statement and one round trip: <c>unnest</c> turns the
    /// two arrays into rows with their position, each is joined to its block, and only when every block was found are
    /// the <c>Blockset</c> row (its <c>Length</c> the sum of the sizes) and the entries inserted. Returns the new ID and
    /// the 1-based position of the first unknown block (one of them null). Data-modifying CTEs see one snapshot and run
    /// exactly once (<see href="https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-MODIFYING"/>).
    /// </summary>
    public const string AddBlocksetByKeys = """
        WITH f AS (SELECT $3::bytea AS h),
        k AS (SELECT * FROM unnest($1::bytea[], $2::bigint[]) WITH ORDINALITY AS k(h, s, i)),
        r AS (SELECT k.i, k.s, b."ID" AS id, v."State" AS st FROM k LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s LEFT JOIN "Remotevolume" v ON v."ID" = b."VolumeID"),
        """ + BlocksetTail;

    /// <summary>
    /// The end of the blockset statement, after <c>r</c> (each listed block's position, size, ID and its volume's
    /// state) and <c>f</c> (the full hash): the <c>Blockset</c> row (length 0 for an empty list) and its entries are written only when every block is
    /// known and none lies in a volume being deleted; the statement returns the new ID, the 1-based position of the first
    /// unknown block, and that of the first block of a volume being deleted.
    /// </summary>
    private const string BlocksetTail = """
        m AS (SELECT min(i) AS i FROM r WHERE id IS NULL),
        d AS (SELECT min(i) AS i FROM r WHERE st IN ('Deleting', 'Deleted')),
        bs AS (INSERT INTO "Blockset" ("Length", "FullHash") SELECT coalesce(sum(r.s), 0), (SELECT h FROM f) FROM r
               HAVING count(r.id) = count(*) AND count(*) FILTER (WHERE r.st IN ('Deleting', 'Deleted')) = 0 RETURNING "ID"),
        e AS (INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT bs."ID", r.i - 1, r.id FROM bs, r)
        SELECT (SELECT "ID" FROM bs), (SELECT i FROM m), (SELECT i FROM d)
        """;

    /// <summary>The server's version (<c>server_version</c>).</summary>
    public const string ServerVersion = "SHOW server_version";

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
