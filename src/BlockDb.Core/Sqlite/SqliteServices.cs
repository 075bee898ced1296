using BlockDb.Blocksets;
using BlockDb.Collection;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts;
using BlockDb.Sessions;
using BlockDb.Sql;
using BlockDb.Volumes;

namespace BlockDb.Sqlite;

/// <summary>
/// One SQLite session's parts that every layout shares: its connection, <see cref="SqliteTransaction"/>,
/// <see cref="CommitPolicy"/>, gate [G1], idle timer and volume checks, with the volume and collection services prepared
/// on first use. The layout's state builds its own <see cref="ILayoutSession"/> on these and hands it to
/// <see cref="Open{TLayout}"/>, which picks the session's type (<see cref="LayoutState.OpenSession"/>).
/// </summary>
internal sealed class SqliteServices
{
    /// <summary>Reads per read transaction in WAL mode when <see cref="BatchingOptions.ReadsPerTransaction"/> is not set.</summary>
    public const int DefaultReadsPerTransaction = 256;

    private readonly Action<ISessionHandle> _onDisposed;
    private VolumeService? _volumes;
    private CollectionService? _collect;

    public SqliteServices(ISqliteConnection connection, SessionSettings settings, Action<ISessionHandle> onDisposed)
    {
        Connection = connection;
        Settings = settings;
        _onDisposed = onDisposed;

        // Read batching by default only in WAL mode: in the rollback-journal modes a held read blocks other writers' commits.
        var reads = settings.Batching.ReadsPerTransaction ?? (settings.AppliedPragmas.JournalMode == JournalMode.Wal ? DefaultReadsPerTransaction : 1);
        Transaction = new SqliteTransaction(connection, settings, reads);
        var policy = new CommitPolicy(settings.Batching, Transaction);
        var gate = new CallGate();
        Site = new CallSite(gate, policy, "sqlite", settings.Provider, settings.Path, settings.Logger);
        VolumeGuard = new VolumeGuard(connection, Transaction, Sql.GetVolumeState);
        Counts = connection.Prepare(BlockDbSql.Counts);
        var commitAge = settings.ReadOnly ? null : settings.Batching.CommitAfterMilliseconds;
        if (commitAge is not null || Transaction.Reads.Enabled)
        {
            IdleTimer = new IdleTimer(gate, policy, Transaction, Transaction.Reads, commitAge);
        }
    }

    public ISqliteConnection Connection { get; }

    /// <summary>The statements the shared services run on this layout's files.</summary>
    public SessionSql Sql => Settings.Layout.Sql;

    public SessionSettings Settings { get; }

    public SqliteTransaction Transaction { get; }

    public CallSite Site { get; }

    public IdleTimer? IdleTimer { get; }

    public VolumeGuard VolumeGuard { get; }

    public ISqliteStatement Counts { get; }

    /// <summary>The volume calls, prepared on first use.</summary>
    public VolumeService Volumes => _volumes ??= new VolumeService(Connection, Transaction, VolumeGuard, Sql);

    /// <summary>The garbage collection, prepared on first use.</summary>
    public CollectionService Collection => _collect ??= new CollectionService(Connection, Transaction, VolumeGuard, Sql);

    /// <summary>The blockset calls over <paramref name="layout"/>'s session, with the layout's rules (<see cref="LayoutState.BlocksetRules"/>).</summary>
    public BlocksetService Blocksets(ILayoutSession layout) =>
        new(Connection, Transaction, layout, VolumeGuard, Sql, Settings.Layout.BlocksetRules(this), Settings.Layout.Definition.TextHashes);

    /// <summary>The session over <paramref name="layout"/>: one <see cref="BlockSession{TEngine}"/> type per layout (and strategy), so its hot path has no virtual call.</summary>
    public ISessionHandle Open<TLayout>(TLayout layout)
        where TLayout : struct, ILayoutSession =>
        new BlockSession<SqliteSession<TLayout>>(new SqliteSession<TLayout>(this, layout), Site, IdleTimer, Settings.ReadOnly, _onDisposed);
}
