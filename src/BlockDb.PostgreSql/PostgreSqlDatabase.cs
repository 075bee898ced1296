using System.Collections.Concurrent;
using BlockDb.Diagnostics;
using BlockDb.Engine;
using BlockDb.Import;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Diagnostics;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Import;
using BlockDb.PostgreSql.Schema;
using BlockDb.PostgreSql.Shared;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Shared;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// The PostgreSQL engine's <see cref="Database"/>: a block index on a server, through a pooled
/// <see cref="NpgsqlDataSource"/>. Opening checks the schema (or creates it in an empty database); sessions, shared
/// sessions, imports, enumerations and checks take connections from the pool. The dispose (Core's) ends them all,
/// then disposes the data source when this database built it (a data source the application registered stays the
/// application's).
/// </summary>
internal sealed class PostgreSqlDatabase : Database
{
    private readonly PgContext _context;
    private readonly bool _ownsDataSource;
    private readonly CancellationTokenSource _closing = new();
    private readonly ConcurrentDictionary<NpgsqlConnection, byte> _enumerations = new();

    private PostgreSqlDatabase(PgContext context, bool ownsDataSource, string engineVersion)
        : base(context.Options, "postgresql", context.ProviderName, context.Server, context.Logger)
    {
        _context = context;
        _ownsDataSource = ownsDataSource;
        EngineVersion = engineVersion;
        StartObserving();
    }

    public override string Engine => "PostgreSQL";

    public override string EngineVersion { get; }

    public override BlockLayout Layout => BlockLayout.BlobHash;

    /// <summary>Checks or creates the schema on one connection and returns the open database; disposes an owned data source when that fails.</summary>
    public static async Task<PostgreSqlDatabase> OpenAsync(PgContext context, bool ownsDataSource, CancellationToken cancellationToken)
    {
        using var activity = Instruments.StartActivity("blockdb.open", Instruments.DatabaseTags("postgresql", context.ProviderName, context.Server));
        try
        {
            var connection = await context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            await using var connectionScope = connection.ConfigureAwait(false);
            await PgSchema.EnsureAsync(connection, context.Options.ReadOnly, context.Server, cancellationToken).ConfigureAwait(false);
            return new PostgreSqlDatabase(context, ownsDataSource, connection.PostgreSqlVersion.ToString());
        }
        catch (Exception e)
        {
            if (ownsDataSource)
            {
                await context.DataSource.DisposeAsync().ConfigureAwait(false);
            }

            throw PgErrors.IsDatabaseFailure(e) ? PgErrors.Map(e, $"Opening the BlockDb index on {Quoted.Value(context.Server)}") : e;
        }
    }

    protected override ValueTask<ISessionHandle> OpenEngineSessionAsync(BatchingOptions batching, Action<ISessionHandle> onClosed, bool bulkImport, CancellationToken cancellationToken) =>
        PgSession.OpenAsync(_context, onClosed, cancellationToken);

    /// <summary>
    /// Reads and the writes that are not gathered share one pool of autocommit sessions, bounded by MaxReaders when set,
    /// else by the connection pool's Maximum Pool Size (a pooled session holds a connection only during a call).
    /// Select-xor-inserts and blocksets with their blocks are gathered by <see cref="PgGatheredWrites"/> [S4] on
    /// <see cref="PgGatheredWrites.DefaultLanes"/> lanes (at most MaxReaders when set); a read-only database, and the
    /// InsertOrIgnoreThenSelect strategy (a statement shape of its own), keep every write on the pooled sessions.
    /// </summary>
    protected override SharedBlockSession OpenEngineSharedSession(Action<SharedBlockSession> onClosed)
    {
        var options = _context.Options;
        var limit = options.GroupCommit.MaxReaders;
        var sessions = new SessionPool(() => PgSession.OpenPooled(_context), limit > 0 ? limit : int.MaxValue);
        var pooled = new PooledWrites(sessions);
        IWriteRoute writes = options.ReadOnly || options.SelectXorInsert == SelectXorInsertStrategy.InsertOrIgnoreThenSelect
            ? pooled
            : new PgGatheredWrites(_context, pooled, limit > 0 ? Math.Min(limit, PgGatheredWrites.DefaultLanes) : PgGatheredWrites.DefaultLanes);
        return new SharedBlockSession(sessions, writes, readFirst: false, readOnly: null, onClosed);
    }

    /// <summary>A bulk import's own connection and transactions (<see cref="PgImportTarget"/>): binary COPY per import transaction, rolled back when not committed.</summary>
    protected override async ValueTask<IImportTarget> OpenImportTargetAsync(string operation, CancellationToken cancellationToken) =>
        await PgImportTarget.OpenAsync(_context, operation, cancellationToken).ConfigureAwait(false);

    protected override BlockDbReadOnlyException ReadOnlyRefusal(string operation) =>
        new(operation, _context.Server, BlockDbReadOnlyException.ReadOnlySqlState);

    public override IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        var volume = filter?.VolumeId;
        var unreferenced = filter?.UnreferencedOnly ?? false;
        return PgEnumeration.StreamAsync(
            _context,
            _enumerations,
            _closing.Token,
            PgSql.EnumerateBlocks,
            c =>
            {
                c.Parameters.Add(new NpgsqlParameter { NpgsqlDbType = NpgsqlTypes.NpgsqlDbType.Bigint, Value = (object?)volume ?? DBNull.Value });
                c.Parameters.Add(new NpgsqlParameter<bool> { NpgsqlDbType = NpgsqlTypes.NpgsqlDbType.Boolean, TypedValue = unreferenced });
            },
            static r => new BlockInfo(r.GetInt64(0), BlockKey.Stored(new BlockHash(r.GetFieldValue<byte[]>(1)), r.GetInt64(2)), r.IsDBNull(3) ? null : r.GetInt64(3)),
            cancellationToken);
    }

    public override IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return PgEnumeration.StreamAsync(
            _context,
            _enumerations,
            _closing.Token,
            PgSql.EnumerateBlocksets,
            null,
            static r => new BlocksetInfo(r.GetInt64(0), r.GetInt64(1), r.IsDBNull(2) ? null : Convert.ToBase64String(r.GetFieldValue<byte[]>(2)), checked((int)r.GetInt64(3))),
            cancellationToken);
    }

    public override IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return PgEnumeration.StreamAsync(_context, _enumerations, _closing.Token, PgSql.EnumerateVolumes, null, PgVolumes.ReadVolume, cancellationToken);
    }

    protected override async ValueTask<BlockDbCheckResult> CheckCoreAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await PgCheck.RunAsync(_context, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, "The check");
        }
    }

    protected override async ValueTask<BlockDbRepairResult> RepairCoreAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await PgCheck.RepairAsync(_context, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, "The repair");
        }
    }

    protected override async Task<BlockDbCounts> CountRowsAsync(CancellationToken cancellationToken)
    {
        var connection = await _context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using (connection.ConfigureAwait(false))
        {
            return await PgBlocks.CountsAsync(connection, null, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Cancels the enumerations' waits and closes their connections (an enumeration between rows then ends with <see cref="ObjectDisposedException"/>).</summary>
    protected override async ValueTask CloseEnumerationsAsync(List<Exception> errors)
    {
        await _closing.CancelAsync().ConfigureAwait(false);
        foreach (var connection in _enumerations.Keys)
        {
            await PgEnumeration.QuietlyAsync(connection).ConfigureAwait(false);
        }
    }

    protected override async ValueTask CloseEngineAsync()
    {
        if (_ownsDataSource)
        {
            await _context.DataSource.DisposeAsync().ConfigureAwait(false);
        }
    }
}
