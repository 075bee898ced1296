using BlockDb.Blocksets;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Sql;
using BlockDb.Sqlite;

namespace BlockDb.Layouts;

/// <summary>A layout's state in one open database, shared by its sessions.</summary>
internal abstract class LayoutState
{
    /// <summary>The layout.</summary>
    public abstract LayoutDefinition Definition { get; }

    /// <summary>The key map's blocks and bytes, or (0, 0) for a layout without one.</summary>
    public virtual (long Blocks, long Bytes) MapUsage => (0, 0);

    /// <summary>Whether the layout keeps an in-memory key map (whose <see cref="MapUsage"/> the metrics report).</summary>
    public virtual bool HasMap => false;

    /// <summary>Where the layout's in-memory state reports its loads and failures (called once, when the database opens).</summary>
    public virtual void Report(KeyMap.MapLoadReporter reporter)
    {
    }

    /// <summary>The statements of the shared session services on this layout's files (<see cref="SessionSql.Own"/> for BlockDb's).</summary>
    public virtual SessionSql Sql => SessionSql.Own;

    /// <summary>The layout's own rules for a session's blocksets, on its connection, or null when it has none.</summary>
    public virtual IBlocksetRules? BlocksetRules(SqliteServices services) => null;

    /// <summary>
    /// Before a span select-xor-insert (or a one-call file) reads or writes anything: refuses the call when a block, or
    /// the call itself, breaks the layout's rule for new blocks (the rule its single call applies per block). Nothing for
    /// BlockDb's own layouts.
    /// </summary>
    /// <exception cref="ArgumentException">The layout refuses a block or the call (the message says which and what is allowed).</exception>
    public virtual void RequireNewBlocks(ReadOnlySpan<BlockKey> blocks, long? volumeId)
    {
    }

    /// <summary>A session on the parts <paramref name="services"/> holds, over the layout's own <see cref="ILayoutSession"/>: the layout picks the session's type (<see cref="SqliteServices.Open{TLayout}"/>).</summary>
    public abstract ISessionHandle OpenSession(SqliteServices services);

    /// <summary>The check's layout-specific part: blocks an in-memory structure misses, and whether the file's guards are intact.</summary>
    public virtual (BlockDbFinding MapMissing, bool GuardsIntact) CheckLayout(ISqliteConnection connection, CancellationToken cancellationToken) =>
        (BlockDbFinding.None, true);

    /// <summary>The layout's own rules, run in the check's snapshot (<see cref="BlockDbCheckResult.LayoutRules"/>): none for BlockDb's own layouts.</summary>
    public virtual IReadOnlyList<BlockDbRuleFinding> CheckRules(ISqliteConnection connection, CancellationToken cancellationToken) => [];

    /// <summary>The lowest ID a repair may give a renumbered block, beyond every row in range.</summary>
    public virtual long RenumberFloor(ISqliteConnection connection) => 0;

    /// <summary>Inside a repair's transaction: no later insert may take an ID up to <paramref name="maxId"/> (it may have been handed out before the repair deleted or moved its row).</summary>
    public virtual void SealIds(ISqliteConnection connection, long maxId)
    {
    }

    /// <summary>After a repair committed: forget what the file no longer matches.</summary>
    public virtual void AfterRepair()
    {
    }

    /// <summary>
    /// When the database is disposed, after every session (nothing changes the state any more): persist what the next
    /// open can use (the KeyMap layout's snapshot). Never throws. Not called for a read-only database.
    /// </summary>
    /// <param name="open">Opens a connection to the file with the pragmas applied, whose provider gives up on a lock after the given milliseconds (its own retries included).</param>
    public virtual void Close(Func<int, ISqliteConnection> open)
    {
    }
}
