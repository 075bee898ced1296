namespace BlockDb.Tests.Enumeration;

/// <summary>
/// Enumerating blocks, blocksets and volumes, for every provider and layout, PostgreSQL included: one snapshot streamed
/// beside a writer, filters and cancellation honoured, and an open enumeration closed when the database is disposed.
/// </summary>
public sealed class EnumerationTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Enumerations_stream_one_snapshot_beside_a_writer_and_honour_cancellation(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Batching.CommitEvery = 0);
        await using var writer = await db.OpenSessionAsync();
        var volume = await writer.RegisterVolumeAsync("v");
        for (var i = 0; i < 50; i++)
        {
            if (i % 2 == 0)
            {
                await writer.SelectXorInsertAsync(TestData.Block(i, 10 + i), volume);
            }
            else
            {
                await writer.SelectXorInsertAsync(TestData.Block(i, 10 + i));
            }
        }

        var blockset = await writer.AddBlocksetAsync([TestData.Block(0, 10), TestData.Block(1, 11)], TestData.Hash(77));
        await writer.CommitAsync();

        // An open batch of the writer is not seen; rows committed after the enumeration began are not either.
        await writer.SelectXorInsertAsync(TestData.Block(1000, 1));
        var seen = new List<BlockInfo>();
        await foreach (var block in db.EnumerateBlocksAsync())
        {
            seen.Add(block);
            if (seen.Count == 1)
            {
                await writer.CommitAsync();
            }
        }

        Assert.Equal(50, seen.Count);
        Assert.Equal(seen.OrderBy(b => b.Id), seen);
        Assert.All(seen, b => Assert.Equal(TestData.Hash((int)(b.Block.Size - 10)), b.Block.Hash.ToString()));

        var inVolume = await Collect(db.EnumerateBlocksAsync(new BlockFilter { VolumeId = volume }));
        Assert.Equal(25, inVolume.Count);
        Assert.All(inVolume, b => Assert.Equal(volume, b.VolumeId));
        Assert.Equal([new BlocksetInfo(blockset, 21, TestData.Hash(77), 2)], await Collect(db.EnumerateBlocksetsAsync()));
        Assert.Equal([new VolumeInfo(volume, "v", VolumeState.Temporary, null, 25, 25 * 34, 24, (25 * 34) - 10)], await Collect(db.EnumerateVolumesAsync()));

        using var cts = new CancellationTokenSource();
        var cancelled = await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (var block in db.EnumerateBlocksAsync(cancellationToken: cts.Token))
            {
                await cts.CancelAsync();
            }
        });
        Assert.Equal(cts.Token, cancelled.CancellationToken);
    }

    [Theory]
    [MemberData(nameof(ProviderMatrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Disposing_the_database_closes_an_open_enumeration(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var db = Open();
        await using (var session = await db.OpenSessionAsync())
        {
            await session.SelectXorInsertAsync(TestData.Block(1, 1));
            await session.SelectXorInsertAsync(TestData.Block(2, 1));
        }

        var enumerator = db.EnumerateBlocksAsync().GetAsyncEnumerator();
        Assert.True(await enumerator.MoveNextAsync());
        await db.DisposeAsync();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await enumerator.MoveNextAsync());
        await enumerator.DisposeAsync();
        if (!IsServer)
        {
            File.Delete(DbPath); // released
        }

        Assert.Throws<ObjectDisposedException>(() => db.EnumerateBlocksAsync().GetAsyncEnumerator());
    }

    private static async Task<List<T>> Collect<T>(IAsyncEnumerable<T> items)
    {
        var list = new List<T>();
        await foreach (var item in items)
        {
            list.Add(item);
        }

        return list;
    }
}
