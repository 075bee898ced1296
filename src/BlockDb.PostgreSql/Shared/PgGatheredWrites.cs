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
/// connection, with its pure select-xor-inserts only. One lane at a time waits on the queue (its turn), so a write wakes
/// one lane. A lane never waits for more work than is queued (a lone caller gets a batch of one), takes requests until
/// the batch holds <see cref="GroupCommitOptions.MaxBatchSize"/> blocks, keeps its connection between batches and gives
/// it back to Npgsql's pool after <see cref="IdleHold"/> without one. Dispose lets the lanes commit every queued
/// request, then returns [S3].
/// </remarks>
internal sealed class PgGatheredWrites : IWriteRoute
{
    /// <summary>Lanes when <see cref="GroupCommitOptions.MaxReaders"/> is not set: batches in flight at once (measured, docs/BENCHMARKS.md).</summary>
    public const int DefaultLanes = 4;

    /// <summary>How long a lane keeps its connection without a batch before it goes back to Npgsql's pool.</summary>
    public static readonly TimeSpan IdleHold = TimeSpan.FromSeconds(1);

    private readonly PgContext _context;
    private readonly PooledWrites _others;
    private readonly Channel<WriteRequest> _queue;
    private readonly int _maxRows;
    private readonly Task[] _lanes;
    private readonly SemaphoreSlim _turn = new(1, 1);
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
        _turn.Dispose();
        await _others.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// One lane: waits for its turn, then for work; takes what is queued (up to the batch size), gives the turn on, runs
    /// the batch, repeats; never throws [S4]. Its connection stays open between batches and goes back to Npgsql's pool
    /// after <see cref="IdleHold"/> without a batch, so a busy lane pays no pool reset per batch and an idle repository
    /// holds none.
    /// </summary>
    private async Task RunLaneAsync()
    {
        var batch = new PgGatheredBatch();
        NpgsqlConnection? connection = null;
        try
        {
            while (await TakeAsync(batch, connection is not null).ConfigureAwait(false) is var taken and not Taken.Closed)
            {
                if (taken == Taken.Idle)
                {
                    await connection!.DisposeAsync().ConfigureAwait(false);
                    connection = null;
                }
                else if (batch.Count > 0)
                {
                    connection = await RunAsync(batch, connection).ConfigureAwait(false);
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

    /// <summary>
    /// Waits for the lane's turn, then for work, and moves what is queued into <paramref name="batch"/> (up to the batch
    /// size; none when every request taken was cancelled): <see cref="Taken.Closed"/> once the queue is completed and
    /// empty, <see cref="Taken.Idle"/> when <paramref name="holding"/> a connection and <see cref="IdleHold"/> passed first.
    /// One lane at a time waits on the queue, so a write wakes one lane, not every idle one.
    /// </summary>
    private async Task<Taken> TakeAsync(PgGatheredBatch batch, bool holding)
    {
        using var idle = holding ? new CancellationTokenSource(IdleHold) : null;
        var token = idle?.Token ?? CancellationToken.None;
        try
        {
            await _turn.WaitAsync(token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            return Taken.Idle;
        }

        try
        {
            if (!await _queue.Reader.WaitToReadAsync(token).ConfigureAwait(false))
            {
                return Taken.Closed;
            }

            while (batch.Rows < _maxRows && _queue.Reader.TryRead(out var request))
            {
                batch.Add(request);
            }

            return Taken.Batch;
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            return Taken.Idle;
        }
        finally
        {
            _turn.Release();
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

    /// <summary>What <see cref="TakeAsync"/> ended with.</summary>
    private enum Taken
    {
        /// <summary>Requests were taken (the batch may be empty when each of them was cancelled).</summary>
        Batch,

        /// <summary>No work within <see cref="IdleHold"/>: the lane gives its connection back.</summary>
        Idle,

        /// <summary>The queue is completed and empty: the lane ends.</summary>
        Closed,
    }

    private static string Operation(WriteKind kind) => kind switch
    {
        WriteKind.SelectXorInsert => nameof(IBlockWriter.SelectXorInsertAsync),
        WriteKind.SelectXorInsertMany => nameof(IBlockWriter.SelectXorInsertManyAsync),
        _ => nameof(IBlockWriter.AddBlocksetAsync),
    };
}
