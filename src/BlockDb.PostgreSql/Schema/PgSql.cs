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
    /// refused for a block in such a volume (<see cref="AddBlocksets"/> will not write it, so its call fails and uploads
    /// nothing: a shared write call is whole, [S4]); returns the new IDs. In (hash, size) order, so writers inserting
    /// overlapping sets wait for each other in one order and do not deadlock (docs/ARCHITECTURE.md [S4]).
    /// <c>ON CONFLICT DO NOTHING</c> makes a block a concurrent writer inserts first a row not returned, as in
    /// <see cref="InsertBlock"/>; the <c>NOT EXISTS</c> only spares known blocks the speculative insert (and an identity
    /// value). <see cref="FindBlocks"/> after it, in a new snapshot, gives every ID.
    /// </summary>
    public const string InsertBlocks = """
        WITH k AS (SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::int[]) WITH ORDINALITY AS k(h, s, vol, n, i)),
        refused AS (SELECT DISTINCT k.n FROM k JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s JOIN "Remotevolume" v ON v."ID" = b."VolumeID"
                    WHERE k.n IS NOT NULL AND v."State" IN ('Deleting', 'Deleted'))
        INSERT INTO "Block" ("Hash", "Size", "VolumeID")
        SELECT f.h, f.s, f.vol FROM (
          SELECT DISTINCT ON (k.h, k.s) k.h, k.s, k.vol
          FROM k
          WHERE (k.vol IS NULL OR EXISTS (SELECT 1 FROM "Remotevolume" v WHERE v."ID" = k.vol AND v."State" NOT IN ('Deleting', 'Deleted')))
            AND (k.n IS NULL OR k.n NOT IN (SELECT r.n FROM refused r))
          ORDER BY k.h, k.s, k.i) f
        WHERE NOT EXISTS (SELECT 1 FROM "Block" b WHERE b."Hash" = f.h AND b."Size" = f.s)
        ORDER BY f.h, f.s
        ON CONFLICT DO NOTHING RETURNING "ID"
        """;

    /// <summary>
    /// Many blocksets from their blocks' hashes and sizes, in one statement (the PostgreSQL gathered writes, [S4]): the
    /// blocks are the rows of <c>$1</c> hashes and <c>$2</c> sizes whose <c>$3</c> blockset number is not NULL, in
    /// order; <c>$4</c> holds each blockset's full hash (NULL allowed) at its number (1-based), so a blockset may have no
    /// block. A blockset is written (its <c>Length</c> the sum of its blocks' sizes, its ID drawn from the identity
    /// column's sequence in number order) only when each of its blocks is known and none lies in a volume being
    /// deleted; one refused blockset does not stop the others. Returns one row per blockset in number order: its number,
    /// the new ID, the 1-based index of its first unknown block and of its first block in a volume being deleted.
    /// </summary>
    public const string AddBlocksets = """
        WITH k AS (SELECT k.h, k.s, k.n, row_number() OVER (PARTITION BY k.n ORDER BY k.i) AS j
                   FROM unnest($1::bytea[], $2::bigint[], $3::int[]) WITH ORDINALITY AS k(h, s, n, i) WHERE k.n IS NOT NULL),
        r AS (SELECT k.n, k.j, k.s, b."ID" AS id, v."State" AS st FROM k
              LEFT JOIN "Block" b ON b."Hash" = k.h AND b."Size" = k.s LEFT JOIN "Remotevolume" v ON v."ID" = b."VolumeID"),
        g AS (SELECT q.n, min(r.j) FILTER (WHERE r.j IS NOT NULL AND r.id IS NULL) AS m,
                     min(r.j) FILTER (WHERE r.st IN ('Deleting', 'Deleted')) AS d, coalesce(sum(r.s), 0) AS len
              FROM generate_subscripts($4::bytea[], 1) AS q(n) LEFT JOIN r ON r.n = q.n GROUP BY q.n),
        ok AS (SELECT g.n, g.len, nextval(pg_get_serial_sequence('"Blockset"', 'ID')) AS id FROM g WHERE g.m IS NULL AND g.d IS NULL ORDER BY g.n),
        bs AS (INSERT INTO "Blockset" ("ID", "Length", "FullHash") OVERRIDING SYSTEM VALUE SELECT ok.id, ok.len, ($4::bytea[])[ok.n] FROM ok),
        e AS (INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT ok.id, r.j - 1, r.id FROM ok JOIN r ON r.n = ok.n)
        SELECT g.n, ok.id, g.m, g.d FROM g LEFT JOIN ok ON ok.n = g.n ORDER BY g.n
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
    /// known, none lies in a volume being deleted and the length fits a <c>bigint</c>; the statement returns the new ID,
    /// the 1-based position of the first unknown block, that of the first block of a volume being deleted, and that of
    /// the block at which the length passes 2^63 - 1 bytes with its size. The length is summed as <c>numeric</c>
    /// (<c>sum(bigint)</c> is <c>numeric</c>), so a length too long is refused as data: a <c>bigint</c> overflow (22003)
    /// would abort the transaction, and with it the session's open batch.
    /// </summary>
    private const string BlocksetTail = """
        m AS (SELECT min(i) AS i FROM r WHERE id IS NULL),
        d AS (SELECT min(i) AS i FROM r WHERE st IN ('Deleting', 'Deleted')),
        o AS (SELECT w.i, w.s FROM (SELECT r.i, r.s, sum(r.s) OVER (ORDER BY r.i) AS t FROM r) w WHERE w.t > 9223372036854775807 ORDER BY w.i LIMIT 1),
        bs AS (INSERT INTO "Blockset" ("Length", "FullHash") SELECT coalesce(sum(r.s), 0), (SELECT h FROM f) FROM r
               HAVING count(r.id) = count(*) AND count(*) FILTER (WHERE r.st IN ('Deleting', 'Deleted')) = 0
                  AND coalesce(sum(r.s), 0) <= 9223372036854775807 RETURNING "ID"),
        e AS (INSERT INTO "BlocksetEntry" ("BlocksetID", "Index", "BlockID") SELECT bs."ID", r.i - 1, r.id FROM bs, r)
        SELECT (SELECT "ID" FROM bs), (SELECT i FROM m), (SELECT i FROM d), (SELECT i FROM o), (SELECT s FROM o)
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
