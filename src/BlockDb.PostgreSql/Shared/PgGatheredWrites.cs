using System.Data;
using System.Diagnostics;
using System.Threading.Channels;
using BlockDb.Diagnostics;
using BlockDb.Shared;
using Npgsql;

namespace BlockDb.PostgreSql.Shared;

/// <summary>
/// PostgreSQL's write route for the shared session (<see cref="IWriteRoute"/>): concurrent select-xor-inserts and
/// blocksets-with-their-blocks (<see cref="PgGatheredBatch.Gathers"/>) are gathered from a bounded queue by a few lanes,
/// each sending what is queued as one batch in one round trip and one commit [S4]; the other writes (rare, and some take
/// the exclusive lifecycle lock, which must not share a transaction) run on pooled sessions (<see cref="PooledWrites"/>).
/// </summary>
/// <remarks>
/// Invariant [S4] (docs/ARCHITECTURE.md): the queue is the only structure the callers and the lanes share; a lane owns
/// its connection and its batch. A lane's batch is one implicit transaction; each request's rows are contiguous and its
/// refusal is its own; every request of a batch is completed only after the commit, and all of them fail together when
/// the server aborted it; a batch is resent only when it cannot have committed (40P01, 40001) or, after a lost
/// connection, with its pure select-xor-inserts only. A lane never waits for more work than is queued (a lone caller
/// gets a batch of one), takes requests until the batch holds <see cref="GroupCommitOptions.MaxBatchSize"/> blocks, and
/// gives its connection back to Npgsql's pool when the queue is empty. Dispose lets the lanes commit every queued
/// request, then returns [S3].
/// </remarks>
internal sealed class PgGatheredWrites : IWriteRoute
{
    /// <summary>Lanes when <see cref="GroupCommitOptions.MaxReaders"/> is not set: batches in flight at once (measured, docs/BENCHMARKS.md).</summary>
    public const int DefaultLanes = 4;

    private readonly PgContext _context;
    private readonly PooledWrites _others;
    private readonly Channel<WriteRequest> _queue;
    private readonly int _maxRows;
    private readonly Task[] _lanes;
    private readonly TagList _tags;
    private long _batches;
    private long _acknowledged;

    /// <param name="context">The database's data source and options.</param>
    /// <param name="others">The route of the writes not gathered.</param>
    /// <param name="lanes">Batches in flight at once (each on a connection of its own while it has work).</param>
    public PgGatheredWrites(PgContext context, PooledWrites others, int lanes)
    {
        _context = context;
        _others = others;
        var options = context.Options.GroupCommit;
        _maxRows = options.MaxBatchSize;
        _tags = new TagList { { "db.system.name", "postgresql" }, { "blockdb.provider", context.ProviderName } };
        _queue = Channel.CreateBounded<WriteRequest>(new BoundedChannelOptions(options.QueueCapacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
        });
        _lanes = new Task[lanes];
        for (var i = 0; i < lanes; i++)
        {
            _lanes[i] = Task.Run(RunLaneAsync);
        }
    }

    /// <summary>Committed batches with at least one request, plus the other writes (one commit each).</summary>
    public long CommittedBatches => Interlocked.Read(ref _batches) + _others.CommittedBatches;

    public long AcknowledgedWrites => Interlocked.Read(ref _acknowledged) + _others.AcknowledgedWrites;

    public int QueueLength => _queue.Reader.Count;

    /// <summary>
    /// Queues a gathered write (the caller gets the request's own task, completed by its lane right after its batch
    /// committed, so nothing acknowledged is pending once a dispose returns [S3]); hands the others to the pooled route.
    /// </summary>
    public ValueTask<TResult> WriteAsync<TResult>(WriteRequest<TResult> request)
    {
        if (!PgGatheredBatch.Gathers(request.Kind))
        {
            return _others.WriteAsync(request);
        }

        return GroupCommitWriter.Enqueue(_queue.Writer, request);
    }

    /// <summary>Stops taking writes, lets the lanes commit every queued one, and returns once they ended [S3].</summary>
    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        await Task.WhenAll(_lanes).ConfigureAwait(false);
        await _others.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>One lane: takes what is queued (up to the batch size), runs it as one batch, repeats; never throws [S4].</summary>
    private async Task RunLaneAsync()
    {
        var reader = _queue.Reader;
        var batch = new PgGatheredBatch();
        NpgsqlConnection? connection = null;
        try
        {
            while (await reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (batch.Rows < _maxRows && reader.TryRead(out var request))
                {
                    batch.Add(request);
                }

                if (batch.Count > 0)
                {
                    connection = await RunAsync(batch, connection).ConfigureAwait(false);
                }

                if (reader.Count == 0 && connection is not null)
                {
                    // Idle: the connection goes back to Npgsql's pool, so an idle repository holds none.
                    await connection.DisposeAsync().ConfigureAwait(false);
                    connection = null;
                }
            }
        }
        finally
        {
            if (connection is not null)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>Runs the batch, resending it once by the rule of [S4]; completes or fails every request in it; returns the lane's connection (null when lost).</summary>
    private async Task<NpgsqlConnection?> RunAsync(PgGatheredBatch batch, NpgsqlConnection? connection)
    {
        for (var attempt = 0; ; attempt++)
        {
            var requests = batch.Count;
            try
            {
                connection ??= await _context.DataSource.OpenConnectionAsync().ConfigureAwait(false);
                var outcome = await batch.ExecuteAsync(connection).ConfigureAwait(false);
                Interlocked.Increment(ref _batches);
                if (Instruments.GroupCommitBatchSize.Enabled)
                {
                    Instruments.GroupCommitBatchSize.Record(requests, _tags);
                }

                // Counted before the callers' tasks complete, so a caller sees its write counted.
                Interlocked.Add(ref _acknowledged, batch.Complete(outcome));
                return connection;
            }
            catch (Exception e)
            {
                var sqlState = PgErrors.IsDatabaseFailure(e) ? PgErrors.SqlStateOf(e) : null;
                var lost = connection is null or { State: ConnectionState.Broken or ConnectionState.Closed } || (sqlState is not null && PgErrors.IsConnectionLoss(sqlState));
                if (lost || sqlState is null)
                {
                    // A broken connection, or one left in an unknown state by a failure that is not the server's.
                    if (connection is not null)
                    {
                        await connection.DisposeAsync().ConfigureAwait(false);
                        connection = null;
                    }

                    if (lost)
                    {
                        _context.DataSource.Clear();
                    }
                }

                Exception Error(WriteRequest request) => sqlState is null ? e : PgErrors.Map(e, Operation(request.Kind));
                if (attempt == 0 && sqlState is "40P01" or "40001")
                {
                    // The server rolled the batch back: nothing of it committed, every request may run again.
                    continue;
                }

                if (attempt == 0 && lost && batch.KeepResendable(Error) > 0)
                {
                    continue;
                }

                batch.FailAll(Error);
                return connection;
            }
        }
    }

    private static string Operation(WriteKind kind) => kind switch
    {
        WriteKind.SelectXorInsert => nameof(IBlockWriter.SelectXorInsertAsync),
        WriteKind.SelectXorInsertMany => nameof(IBlockWriter.SelectXorInsertManyAsync),
        _ => nameof(IBlockWriter.AddBlocksetAsync),
    };
}
