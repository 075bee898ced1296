using BlockDb.Layouts;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb.Sessions;

/// <summary>What a session needs from its database: frozen when the session opens.</summary>
/// <param name="Path">The database file, for messages.</param>
/// <param name="Layout">The layout's state in the database (its stores, the KeyMap layout's key map).</param>
/// <param name="Batching">When the session commits.</param>
/// <param name="Strategy">The select-xor-insert strategy of the indexed layouts.</param>
/// <param name="ReadOnly">Whether writes are refused.</param>
/// <param name="AppliedPragmas">The pragmas read back from the session's connection.</param>
/// <param name="Clock">The database's commit counter, shared by its sessions.</param>
/// <param name="Provider">The provider's name (for metrics).</param>
/// <param name="Logger">The database's logger.</param>
/// <param name="External">
/// Whether the connection and its transaction are the caller's (<see cref="BlockDatabaseBuilder.UseCallerConnection"/>):
/// the session then never begins, commits or rolls back [X1], needs the caller's transaction open at every call [X2], and
/// wraps each call's writes in a savepoint of its own, released before the call returns.
/// </param>
/// <param name="BulkImport">
/// A bulk import's session (<see cref="IBlockDatabase.ImportBlocksAsync"/>): on the KeyMap layout each write transaction
/// lifts the insert guard after its catch-up and restores and checks it before <c>COMMIT</c> (docs/ARCHITECTURE.md, M6).
/// </param>
internal sealed record SessionSettings(
    string Path,
    LayoutState Layout,
    BatchingOptions Batching,
    SelectXorInsertStrategy Strategy,
    bool ReadOnly,
    PragmaSettings AppliedPragmas,
    CommitClock Clock,
    string Provider,
    ILogger Logger,
    bool External = false,
    bool BulkImport = false);
