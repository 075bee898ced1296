using BlockDb.PostgreSql.Blocks;
using BlockDb.PostgreSql.Blocksets;
using BlockDb.PostgreSql.Engine;
using BlockDb.PostgreSql.Schema;
using BlockDb.PostgreSql.Volumes;
using BlockDb.Shared;
using BlockDb.Volumes;
using Npgsql;
using static BlockDb.PostgreSql.PgCommands;

namespace BlockDb.PostgreSql.Shared;

/// <summary>
/// One lane's batch of gathered writes (<see cref="PgGatheredWrites"/>, [S4]): the rows of every request in arrays, each
/// request's rows contiguous, sent as one <see cref="NpgsqlBatch"/> in autocommit (one implicit transaction, committed
/// at its Sync): [<see cref="PgSql.LockShared"/>], <see cref="PgSql.InsertBlocks"/>, then in a new snapshot
/// <see cref="PgSql.FindBlocks"/>, or <see cref="PgSql.FindBlocksAddBlocksets"/> when the batch holds a blockset (one
/// lookup per key for the IDs and the blocksets). Owned by its lane; reused between batches.
/// </summary>
/// <remarks>
/// Order within a batch, which the results follow: the requests whose volume can receive blocks (or who name none) in
/// queue order, then the requests whose volume refuses blocks (missing, <c>Deleting</c>, <c>Deleted</c>), which insert
/// nothing and see what the others inserted; that is a serial order of concurrent calls, so each caller gets what it
/// would have got alone in that order. A block is created at the first place of its ID among the former.
/// </remarks>
internal sealed partial class PgGatheredBatch
{
    private readonly List<Entry> _entries = [];
    private readonly List<byte[]> _hashes = [];
    private readonly List<long> _sizes = [];
    private readonly List<long?> _volumes = [];
    private readonly List<int?> _numbers = [];
    private readonly List<byte[]?> _fullHashes = [];
    private bool _locked;

    /// <summary>Rows (blocks) in the batch.</summary>
    public int Rows => _hashes.Count;

    /// <summary>Requests in the batch.</summary>
    public int Count => _entries.Count;

    /// <summary>Whether <paramref name="kind"/> is gathered: select-xor-insert of one or many blocks, and a blockset with its blocks.</summary>
    public static bool Gathers(WriteKind kind) => kind is WriteKind.SelectXorInsert or WriteKind.SelectXorInsertMany or WriteKind.AddBlockset;

    /// <summary>Adds a request's rows, or fails it alone: its token is cancelled, or its input cannot be sent (a blockset's length passes <see cref="long.MaxValue"/>).</summary>
    public void Add(WriteRequest request) => Add(request, honourToken: true);

    /// <param name="request">The request.</param>
    /// <param name="honourToken">False for a request sent already (a resend): its token is honoured only until it is sent [P3].</param>
    private void Add(WriteRequest request, bool honourToken)
    {
        if (honourToken && request.CancellationToken.IsCancellationRequested)
        {
            request.Fail(new OperationCanceledException(request.CancellationToken));
            return;
        }

        byte[][] hashes;
        long[] sizes;
        try
        {
            (hashes, sizes) = request.Kind switch
            {
                WriteKind.SelectXorInsert => ([request.Block.Hash.Bytes.ToArray()], [request.Block.Size]),
                WriteKind.SelectXorInsertMany => PgKeys.Of(request.Blocks.Span, forBlockset: false),
                WriteKind.AddBlockset => PgKeys.Of(request.Blocks.Span, forBlockset: true),
                _ => throw new InvalidOperationException($"Write kind {request.Kind} is not gathered."),
            };
        }
        catch (Exception e)
        {
            request.Fail(e);
            return;
        }

        int? number = null;
        if (request.Kind == WriteKind.AddBlockset)
        {
            _fullHashes.Add(request.Hash.IsEmpty ? null : request.Hash.Bytes.ToArray());
            number = _fullHashes.Count;
        }

        // A span takes the lock too: a block collected between its insert and its find would fail the request after its
        // other blocks were inserted, and a write call is whole.
        _locked |= number is not null || request.VolumeId is not null || hashes.Length > 1;
        _entries.Add(new Entry(request, _hashes.Count, hashes.Length, number, Resent: !honourToken));
        _hashes.AddRange(hashes);
        _sizes.AddRange(sizes);
        for (var i = 0; i < hashes.Length; i++)
        {
            _volumes.Add(request.VolumeId);
            _numbers.Add(number);
        }
    }

    /// <summary>Empties the batch for the lane's next one.</summary>
    public void Clear()
    {
        _entries.Clear();
        _hashes.Clear();
        _sizes.Clear();
        _volumes.Clear();
        _numbers.Clear();
        _fullHashes.Clear();
        _locked = false;
    }

    /// <summary>Fails every request with <paramref name="error"/> (made per request: its operation named) and empties the batch.</summary>
    public void FailAll(Func<WriteRequest, Exception> error)
    {
        foreach (var entry in _entries)
        {
            entry.Request.Fail(error(entry.Request));
        }

        Clear();
    }

    /// <summary>
    /// After a lost connection (the outcome unknown): fails the requests that a resend could write twice (a blockset: no
    /// unique key on it) and keeps the rest, pure select-xor-inserts, which a resend finds or inserts once, and which
    /// then report as created every block the resend's batch did not give to an earlier request (the lost batch may have
    /// created it); returns how many remain.
    /// </summary>
    public int KeepResendable(Func<WriteRequest, Exception> error)
    {
        var kept = new List<WriteRequest>(_entries.Count);
        foreach (var entry in _entries)
        {
            if (entry.Blockset is null)
            {
                kept.Add(entry.Request);
            }
            else
            {
                entry.Request.Fail(error(entry.Request));
            }
        }

        Clear();
        foreach (var request in kept)
        {
            Add(request, honourToken: false);
        }

        return Count;
    }

    /// <summary>
    /// Sends the batch in one round trip and reads it to its end, so it returns only once the implicit transaction has
    /// committed (the server's ReadyForQuery) [S4]; throws (Npgsql's exception) when the server aborted it or the
    /// connection broke. Completes no request.
    /// </summary>
    public async Task<Outcome> ExecuteAsync(NpgsqlConnection connection)
    {
        var hashes = _hashes.ToArray();
        var sizes = _sizes.ToArray();
        var volumes = _volumes.ToArray();
        using var batch = new NpgsqlBatch(connection);
        if (_locked)
        {
            batch.BatchCommands.Add(new NpgsqlBatchCommand(PgSql.LockShared));
        }

        var numbers = _numbers.ToArray();
        var insert = Keyed(PgSql.InsertBlocks, hashes, sizes, VolumeIds(volumes));
        insert.Parameters.Add(BlocksetNumbers(numbers));
        batch.BatchCommands.Add(insert);
        var blocksets = _fullHashes.Count;
        batch.BatchCommands.Add(blocksets > 0
            ? PgBlocks.FindAndAdd(hashes, sizes, VolumeIds(volumes), numbers, _fullHashes.ToArray())
            : Keyed(PgSql.FindBlocks, hashes, sizes, VolumeIds(volumes)));

        var reader = await batch.ExecuteReaderAsync().ConfigureAwait(false);
        var created = new HashSet<long>();
        var ids = new long?[hashes.Length];
        var states = new string?[hashes.Length];
        var added = new BlocksetAdded[blocksets];
        await using (reader.ConfigureAwait(false))
        {
            if (_locked)
            {
                await reader.NextResultAsync().ConfigureAwait(false);
            }

            while (await reader.ReadAsync().ConfigureAwait(false))
            {
                created.Add(reader.GetInt64(0));
            }

            await reader.NextResultAsync().ConfigureAwait(false);
            if (blocksets > 0)
            {
                await PgBlocks.ReadFoundAndAddedAsync(reader, ids, states, added, CancellationToken.None).ConfigureAwait(false);
            }
            else
            {
                var row = 0;
                while (await reader.ReadAsync().ConfigureAwait(false))
                {
                    if (row < ids.Length)
                    {
                        ids[row] = reader.IsDBNull(0) ? null : reader.GetInt64(0);
                        states[row] = reader.IsDBNull(1) ? null : reader.GetString(1);
                    }

                    row++;
                }

                if (row != hashes.Length)
                {
                    throw new BlockDbException($"The server returned {row} rows for {hashes.Length} blocks; expected one per block.");
                }
            }

            // Reading to the end takes the batch's last message, ReadyForQuery: the implicit transaction has committed,
            // or this throws the error that aborted it [S4].
            while (await reader.NextResultAsync().ConfigureAwait(false))
            {
            }
        }

        return new Outcome(hashes, sizes, ids, states, created, added);
    }

    private static NpgsqlBatchCommand Keyed(string sql, byte[][] hashes, long[] sizes, NpgsqlParameter third)
    {
        var command = new NpgsqlBatchCommand(sql);
        AddKeys(command.Parameters, hashes, sizes);
        command.Parameters.Add(third);
        return command;
    }

    /// <summary>A request and its rows: <paramref name="Offset"/>, <paramref name="Count"/>; its blockset's number (1-based) when it writes one; whether it is sent again after a lost connection (<paramref name="Resent"/>: its first batch may have committed).</summary>
    private readonly record struct Entry(WriteRequest Request, int Offset, int Count, int? Blockset, bool Resent);

    /// <summary>What a committed batch returned: the rows sent, each row's ID (null: not in the index) and its volume's state, the new IDs, each blockset's outcome.</summary>
    public sealed record Outcome(byte[][] Hashes, long[] Sizes, long?[] Ids, string?[] States, HashSet<long> Created, BlocksetAdded[] Blocksets);
}
