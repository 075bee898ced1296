using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using BlockDb.Diagnostics;
using BlockDb.Import;
using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Diagnostics;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Import;
using BlockDb.PostgreSql.Schema;
using BlockDb.Shared;
using BlockDb.PostgreSql.Volumes;
using Npgsql;

namespace BlockDb.PostgreSql;

/// <summary>
/// A block index on a PostgreSQL server, through a pooled <see cref="NpgsqlDataSource"/>. Opening checks the schema (or
/// creates it in an empty database); sessions and shared repositories take connections from the pool. Disposing waits
/// for every session's and shared repository's call in flight, ends them, and disposes the data source when this
/// database built it (a data source the application registered stays the application's). See <see cref="IBlockDatabase"/>.
/// </summary>
internal sealed class PostgreSqlDatabase : IBlockDatabase, IBlockDbObservable
{
    private readonly PgContext _context;
    private readonly bool _ownsDataSource;
    private readonly ConcurrentDictionary<object, byte> _open = new();
    private readonly CancellationTokenSource _closing = new();
    private readonly ConcurrentDictionary<NpgsqlConnection, byte> _enumerations = new();
    private readonly RowCountCache _rows;
    private readonly TagList _tags;
    private readonly DisposeOnce _disposal = new();

    private PostgreSqlDatabase(PgContext context, bool ownsDataSource, string engineVersion)
    {
        _context = context;
        _ownsDataSource = ownsDataSource;
        EngineVersion = engineVersion;
        _tags = Tags(context);
        _rows = new RowCountCache(CountRowsAsync, _tags);
        Instruments.Register(this);
    }

    public string ProviderName => _context.ProviderName;

    /// <summary>The database's measurement and span tags: system, provider, server.</summary>
    private static TagList Tags(PgContext context) => Instruments.DatabaseTags("postgresql", context.ProviderName, context.Server);

    public string Engine => "PostgreSQL";

    public string EngineVersion { get; }

    public string? SqliteVersion => null;

    public string DataSource => _context.Server;

    public PragmaSettings AppliedPragmas => PragmaSettings.None;

    public BlockDbOptions Options => _context.Options.Clone();

    public BlockLayout Layout => BlockLayout.BlobHash;

    public (long Blocks, long Bytes) KeyMapUsage => (0, 0);

    /// <summary>The pool, for the bulk import.</summary>
    internal PgContext Context => _context;

    /// <summary>Checks or creates the schema on one connection and returns the open database; disposes an owned data source when that fails.</summary>
    public static async Task<PostgreSqlDatabase> OpenAsync(PgContext context, bool ownsDataSource, CancellationToken cancellationToken)
    {
        using var activity = Instruments.StartActivity("blockdb.open", Tags(context));
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

    public async ValueTask<IBlockRepository> OpenSessionAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        var session = await PgSession.OpenAsync(_context, s => _open.TryRemove(s, out _), cancellationToken).ConfigureAwait(false);
        _open[session] = 0;
        if (_disposal.Begun)
        {
            await session.DisposeAsync().ConfigureAwait(false);
            ThrowIfDisposed();
        }

        return session;
    }

    public async ValueTask<ImportResult> ImportBlocksAsync(IAsyncEnumerable<ImportBlock> blocks, ImportOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocks);
        var target = await OpenImportTargetAsync(nameof(ImportBlocksAsync), options, cancellationToken).ConfigureAwait(false);
        try
        {
            return await BulkImport.ImportBlocksAsync(target, blocks, options ?? new ImportOptions(), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await CloseImportAsync(target).ConfigureAwait(false);
        }
    }

    public async ValueTask<ImportResult> ImportBlocksetsAsync(IAsyncEnumerable<ImportBlockset> blocksets, ImportOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(blocksets);
        var target = await OpenImportTargetAsync(nameof(ImportBlocksetsAsync), options, cancellationToken).ConfigureAwait(false);
        try
        {
            return await BulkImport.ImportBlocksetsAsync(target, blocksets, options ?? new ImportOptions(), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await CloseImportAsync(target).ConfigureAwait(false);
        }
    }

    /// <summary>A bulk import's own connection and transactions (<see cref="PgImportTarget"/>): binary COPY per import transaction, rolled back when not committed.</summary>
    private async ValueTask<PgImportTarget> OpenImportTargetAsync(string operation, ImportOptions? options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        options?.Validate();
        _context.RequireWritable(operation);
        var target = await PgImportTarget.OpenAsync(_context, operation, cancellationToken).ConfigureAwait(false);
        _open[target] = 0;
        if (_disposal.Begun)
        {
            await CloseImportAsync(target).ConfigureAwait(false);
            ThrowIfDisposed();
        }

        return target;
    }

    private ValueTask CloseImportAsync(PgImportTarget target)
    {
        _open.TryRemove(target, out _);
        return target.DisposeAsync();
    }

    public IAsyncEnumerable<BlockInfo> EnumerateBlocksAsync(BlockFilter? filter = null, CancellationToken cancellationToken = default)
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
            static r => new BlockInfo(r.GetInt64(0), Convert.ToBase64String(r.GetFieldValue<byte[]>(1)), r.GetInt64(2), r.IsDBNull(3) ? null : r.GetInt64(3)),
            cancellationToken);
    }

    public IAsyncEnumerable<BlocksetInfo> EnumerateBlocksetsAsync(CancellationToken cancellationToken = default)
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

    public IAsyncEnumerable<VolumeInfo> EnumerateVolumesAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return PgEnumeration.StreamAsync(_context, _enumerations, _closing.Token, PgSql.EnumerateVolumes, null, PgVolumes.ReadVolume, cancellationToken);
    }

    public ISharedBlockRepository OpenSharedRepository()
    {
        ThrowIfDisposed();
        // Reads and writes share one pool of autocommit sessions, bounded by MaxReaders when set, else by the
        // connection pool's Maximum Pool Size (a pooled session holds a connection only during a call).
        var limit = _context.Options.GroupCommit.MaxReaders;
        var sessions = new SessionPool(() => PgSession.OpenPooled(_context), limit > 0 ? limit : int.MaxValue);
        var shared = new SharedBlockSession(sessions, new PooledWrites(sessions), readFirst: false, readOnly: null, s => _open.TryRemove(s, out _));
        _open[shared] = 0;
        if (_disposal.Begun)
        {
            shared.Dispose();
            ThrowIfDisposed();
        }

        return shared;
    }

    public ValueTask<BlockDbCheckResult> CheckAsync(CancellationToken cancellationToken = default) =>
        RunMaintenanceAsync("blockdb.check", token => PgCheck.RunAsync(_context, token), cancellationToken);

    public ValueTask<BlockDbRepairResult> RepairAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        _context.RequireWritable(nameof(RepairAsync));
        return RunMaintenanceAsync("blockdb.repair", token => PgCheck.RepairAsync(_context, token), cancellationToken);
    }

    void IBlockDbObservable.ObserveKeyMap(List<Measurement<long>> measurements, bool bytes)
    {
        // No key map: the server's unique index finds blocks.
    }

    void IBlockDbObservable.ObserveQueue(List<Measurement<long>> measurements)
    {
        // No group-commit queue: each shared write commits on a pooled session of its own (PooledWrites).
    }

    void IBlockDbObservable.ObservePageCache(List<Measurement<long>> measurements, bool hits)
    {
        // SQLite's page cache only; the server's buffer statistics are in pg_stat_database.
    }

    void IBlockDbObservable.ObserveRows(List<Measurement<long>> measurements) => _rows.Observe(measurements);

    private async Task<BlockDbCounts> CountRowsAsync(CancellationToken cancellationToken)
    {
        var connection = await _context.DataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using (connection.ConfigureAwait(false))
        {
            return await PgBlocks.CountsAsync(connection, null, cancellationToken).ConfigureAwait(false);
        }
    }

    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Disposes every open session and shared repository (each waits for its call in flight), then the owned data source.</summary>
    /// <exception cref="AggregateException">Ending a session's batch failed (its connection is given back all the same), as on SQLite.</exception>
    public ValueTask DisposeAsync() => _disposal.RunAsync(DisposeCoreAsync);

    private async ValueTask DisposeCoreAsync()
    {
        Instruments.Unregister(this);
        await _rows.DisposeAsync().ConfigureAwait(false);
        await _closing.CancelAsync().ConfigureAwait(false);
        foreach (var connection in _enumerations.Keys)
        {
            await PgEnumeration.QuietlyAsync(connection).ConfigureAwait(false);
        }

        List<Exception>? errors = null;
        foreach (var open in _open.Keys)
        {
            try
            {
                await ((IAsyncDisposable)open).DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception e)
            {
                // A session whose final commit failed: reported once every session is closed, as on SQLite (D4).
                (errors ??= []).Add(e);
            }
        }

        if (_ownsDataSource)
        {
            await _context.DataSource.DisposeAsync().ConfigureAwait(false);
        }

        if (errors is not null)
        {
            throw new AggregateException("Disposing the open BlockDb sessions failed.", errors);
        }
    }

    private async ValueTask<T> RunMaintenanceAsync<T>(string activityName, Func<CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        using var activity = Instruments.StartActivity(activityName, _tags);
        try
        {
            return await work(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (PgErrors.IsDatabaseFailure(e))
        {
            throw PgErrors.Map(e, "The check");
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposal.Begun, this);
}
