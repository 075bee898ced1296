namespace BlockDb.PostgreSql.Schema;

// The lifecycle lock and garbage collection. Values travel only as parameters.
internal static partial class PgSql
{
    /// <summary>The lifecycle lock, shared.</summary>
    /// <remarks>
    /// The lifecycle lock is a transaction-level advisory lock (<see href="https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS"/>)
    /// keyed by the schema: writes that make blocks referenced or record them into a volume take it shared; garbage
    /// collection, volume state changes and block moves take it exclusive. It is taken by a statement of its own before the
    /// statement it protects, so that statement's snapshot (READ COMMITTED takes one per statement) sees everything the
    /// other side committed: a collection never deletes a block a blockset being added names, and a volume goes
    /// <c>Deleting</c> only when no blockset references its blocks.
    /// </remarks>
    public const string LockShared = "SELECT pg_advisory_xact_lock_shared(1112297284, hashtext(current_schema()))";

    /// <summary>The lifecycle lock, exclusive.</summary>
    public const string LockExclusive = "SELECT pg_advisory_xact_lock(1112297284, hashtext(current_schema()))";

    /// <summary>Deletes the unreferenced blocks (all, or volume <c>$1</c>'s) and returns what went, per volume.</summary>
    public const string Collect = """
        WITH c AS (DELETE FROM "Block" b WHERE ($1::bigint IS NULL OR b."VolumeID" = $1)
                   AND NOT EXISTS (SELECT 1 FROM "BlocksetEntry" e WHERE e."BlockID" = b."ID") RETURNING b."VolumeID", b."Size")
        SELECT "VolumeID", count(*), coalesce(sum("Size"), 0)::bigint FROM c GROUP BY "VolumeID" ORDER BY "VolumeID" NULLS FIRST
        """;
}
