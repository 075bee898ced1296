using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace BlockDb.Diagnostics;

/// <summary>
/// The rows per table that <c>blockdb.rows</c> reports for one open database: counted off the collecting thread, at
/// most once per <see cref="RefreshInterval"/>, and reported as of the last count (nothing before the first one ends).
/// </summary>
/// <remarks>
/// Invariant: at most one count runs at a time (<c>_refresh</c> is replaced only when the previous one has ended), and
/// after <see cref="DisposeAsync"/> returns none runs and none starts. A count is a full scan of each table's smallest
/// index (seconds on a file of 1e8 blocks), which is why it is rare and never on the collector's thread [O2].
/// </remarks>
internal sealed class RowCountCache : IAsyncDisposable
{
    /// <summary>The least time between two counts: one minute.</summary>
    public static readonly TimeSpan RefreshInterval = TimeSpan.FromMinutes(1);

    private readonly Func<CancellationToken, Task<BlockDbCounts>> _count;
    private readonly TagList _tags;
    private readonly CancellationTokenSource _closing = new();
    private readonly Lock _gate = new();
    private Task _refresh = Task.CompletedTask;
    private long _lastStarted = long.MinValue;
    private BlockDbCounts? _counts;
    private bool _closed;

    /// <summary>Counts with <paramref name="count"/> when observed; tags each measurement with <paramref name="tags"/> and the table.</summary>
    /// <param name="count">Counts the rows; may throw (the last counts then stay).</param>
    /// <param name="tags">The database's tags (<see cref="Instruments.DatabaseTags"/>).</param>
    public RowCountCache(Func<CancellationToken, Task<BlockDbCounts>> count, TagList tags)
    {
        _count = count;
        _tags = tags;
    }

    /// <summary>Adds the last counts to <paramref name="measurements"/> and starts a new count when the last is older than <see cref="RefreshInterval"/>.</summary>
    /// <param name="measurements">Where to add one measurement per table (<c>blockdb.table</c>: Block, Blockset, BlocksetEntry).</param>
    public void Observe(List<Measurement<long>> measurements)
    {
        BlockDbCounts? counts;
        lock (_gate)
        {
            counts = _counts;
            if (!_closed && _refresh.IsCompleted && (_lastStarted == long.MinValue || Stopwatch.GetElapsedTime(_lastStarted) >= RefreshInterval))
            {
                _lastStarted = Stopwatch.GetTimestamp();
                _refresh = Task.Run(RefreshAsync);
            }
        }

        if (counts is { } c)
        {
            Add(measurements, "Block", c.Blocks);
            Add(measurements, "Blockset", c.Blocksets);
            Add(measurements, "BlocksetEntry", c.BlocksetEntries);
        }
    }

    /// <summary>Cancels a running count and waits for it to end.</summary>
    /// <returns>When no count runs.</returns>
    public async ValueTask DisposeAsync()
    {
        Task refresh;
        lock (_gate)
        {
            if (_closed)
            {
                return;
            }

            _closed = true;
            refresh = _refresh;
        }

        await _closing.CancelAsync().ConfigureAwait(false);
        await refresh.ConfigureAwait(false);
        _closing.Dispose();
    }

    private async Task RefreshAsync()
    {
        try
        {
            var counts = await _count(_closing.Token).ConfigureAwait(false);
            lock (_gate)
            {
                _counts = counts;
            }
        }
        catch (Exception)
        {
            // A metric is not worth a failure (the database may be closing, or busy): the last counts stay.
        }
    }

    private void Add(List<Measurement<long>> measurements, string table, long rows)
    {
        var tags = _tags;
        tags.Add("blockdb.table", table);
        measurements.Add(new Measurement<long>(rows, tags));
    }
}
