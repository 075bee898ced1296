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
    /// The IDs of many blocks, one row per block of the arrays (<c>$1</c> hashes, <c>$2</c> sizes, <c>$3</c> each block's
    /// volume or NULL) in their order (NULL for a block not in the index), each with the state of its volume (NULL when
    /// none was named or there is no such volume). <c>unnest</c> over arrays of equal length gives one row per position
    /// (<see href="https://www.postgresql.org/docs/current/functions-array.html"/>).
    /// </summary>
    public const string FindBlocks = """
        SELECT b."ID", v."State"
        FROM unnest($1::bytea[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS k(h, s, vol, i)
        LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s LEFT JOIN "Remotevolume" v ON v."ID" = k.vol
        ORDER BY k.i
        """;

    /// <summary>
    /// Inserts those of many blocks (<c>$1</c> hashes, <c>$2</c> sizes, <c>$3</c> each block's volume or NULL, <c>$4</c>
    /// each block's blockset number or NULL, or a NULL array) that are not in the index, each once however often it is
    /// listed, recorded in the volume of its first place whose volume can receive blocks (none, or one that exists and is
    /// not <c>Deleting</c> or <c>Deleted</c>; a place with a refused volume never inserts) and whose blockset is not
    /// refused for a block in such a volume (<see cref="FindBlocksAddBlocksets"/> will not write it, so its call fails and uploads
    /// nothing: a shared write call is whole, [S4]); returns the new IDs. In (hash, size) order, so writers inserting
    /// overlapping sets wait for each other in one order and do not deadlock (docs/ARCHITECTURE.md [S4]).
    /// <c>ON CONFLICT DO NOTHING</c> makes a block a concurrent writer inserts first a row not returned, as in
    /// <see cref="InsertBlock"/>; the one join on <c>Block</c> (which finds the refused blockset's known blocks too) only
    /// spares known blocks the speculative insert (and an identity value). <see cref="FindBlocks"/> after it, in a new
    /// snapshot, gives every ID.
    /// </summary>
    public const string InsertBlocks = """
        WITH k AS (SELECT k.*, b."ID" AS id, v."State" AS st
                   FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::int[]) WITH ORDINALITY AS k(h, s, vol, n, i)
                   LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s LEFT JOIN "Remotevolume" v ON v."ID" = b."VolumeID"),
        refused AS (SELECT DISTINCT k.n FROM k WHERE k.n IS NOT NULL AND k.st IN ('Deleting', 'Deleted'))
        INSERT INTO "Block" ("Hash", "Size", "VolumeID")
        SELECT f.h, f.s, f.vol FROM (
          SELECT DISTINCT ON (k.h, k.s) k.h, k.s, k.vol
          FROM k
          WHERE k.id IS NULL
            AND (k.vol IS NULL OR EXISTS (SELECT 1 FROM "Remotevolume" v WHERE v."ID" = k.vol AND v."State" NOT IN ('Deleting', 'Deleted')))
            AND (k.n IS NULL OR k.n NOT IN (SELECT r.n FROM refused r))
          ORDER BY k.h, k.s, k.i) f
        ORDER BY f.h, f.s
        ON CONFLICT DO NOTHING RETURNING "ID"
        """;

    /// <summary>
    /// <see cref="FindBlocks"/> and many blocksets made of the blocks found, in one statement that resolves each key once
    /// (the gathered writes [S4], and a session's blockset, as the blockset of number 1): <c>$1</c> hashes, <c>$2</c> sizes,
    /// <c>$3</c> each block's named volume or NULL, as <see cref="FindBlocks"/>; <c>$4</c> each block's blockset number
    /// (1-based, NULL: the block belongs to none), the blocks of a blockset in order; <c>$5</c> each blockset's full hash
    /// (NULL allowed) at its number, so a blockset may have no block. A blockset is written (its <c>Length</c> the sum of
    /// its blocks' sizes, its ID drawn from the identity column's sequence in number order) only when each of its blocks is
    /// known and none lies in a volume being deleted; one refused blockset does not stop the others. Returns first one row
    /// per block in order (<c>0</c>, its position, its ID or NULL, its named volume's state or NULL), then one per blockset
    /// in number order (<c>1</c>, its number, the new ID, the 1-based index of its first unknown block and of its first
    /// block in a volume being deleted). <c>r</c>, read twice, is computed once
    /// (<see href="https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-CTE-MATERIALIZATION"/>).
    /// </summary>
    public const string FindBlocksAddBlocksets = """
        WITH r AS (SELECT k.i, k.n, k.s, b."ID" AS id, b."VolumeID" AS bv, nv."State" AS vst
                   FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::int[]) WITH ORDINALITY AS k(h, s, vol, n, i)
                   LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s LEFT JOIN "Remotevolume" nv ON nv."ID" = k.vol),
        q AS (SELECT r.n, r.s, r.id, row_number() OVER (PARTITION BY r.n ORDER BY r.i) AS j, v."State" AS st
              FROM r LEFT JOIN "Remotevolume" v ON v."ID" = r.bv WHERE r.n IS NOT NULL),
        g AS (SELECT p.n, min(q.j) FILTER (WHERE q.j IS NOT NULL AND q.id IS NULL) AS m,
                     min(q.j) FILTER (WHERE q.st IN ('Deleting', 'Deleted')) AS d, coalesce(sum(q.s), 0) AS len
              FROM generate_subscripts($5::bytea[], 1) AS p(n) LEFT JOIN q ON q.n = p.n GROUP BY p.n),
        ok AS (SELECT g.n, g.len, nextval(pg_get_serial_sequence('"Blockset"', 'ID')) AS id FROM g WHERE g.m IS NULL AND g.d IS NULL ORDER BY g.n),
        bs AS (INSERT INTO "Blockset" ("ID", "Length", "FullHash") OVERRIDING SYSTEM VALUE SELECT ok.id, ok.len, ($5::bytea[])[ok.n] FROM ok),
        e AS (INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT ok.id, q.j - 1, q.id FROM ok JOIN q ON q.n = ok.n)
        SELECT 0 AS t, r.i AS o, r.id, r.vst, NULL::bigint AS m, NULL::bigint AS d FROM r
        UNION ALL
        SELECT 1, g.n, ok.id, NULL, g.m, g.d FROM g LEFT JOIN ok ON ok.n = g.n
        ORDER BY t, o
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
