using System.Text.RegularExpressions;
using BlockDb.Opening;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// What a file (<see cref="IBlockWriter.AddBlocksetAsync"/>) sends PostgreSQL, counted from Npgsql's own log of each
/// round trip (<c>CommandExecutionCompleted</c>, <c>BatchExecutionCompleted</c>, with the statements' text): one round
/// trip, in which the file's keys are looked up in <c>Block</c> twice, by the insert (which skips the known ones) and by
/// one statement that both returns the IDs and writes the blockset from them; on the shared session the same for a
/// batch of files from concurrent callers [S4].
/// </summary>
public sealed partial class PostgreSqlBlocksetRoundTripTests : PostgreSqlSchemaTestBase
{
    [PostgresFact]
    public async Task A_session_sends_a_file_in_one_round_trip_that_looks_its_keys_up_twice()
    {
        var log = new CapturingLoggerFactory();
        await using var db = OpenLogged(log);
        await using var session = await db.OpenSessionAsync();
        var known = Enumerable.Range(0, 6).Select(i => TestData.Block(i, 4096)).ToArray();
        await session.SelectXorInsertManyAsync(known[..3], new SelectXorInsertResult[3]);

        log.Messages.Clear();
        var results = new SelectXorInsertResult[known.Length];
        var id = await session.AddBlocksetAsync(known, results, TestData.Bytes(1));
        var trips = RoundTrips(log);

        Assert.Equal([false, false, false, true, true, true], results.Select(r => r.Created));
        var trip = Assert.Single(trips);
        Assert.Equal(2, KeyLookups(trip));
        Assert.Equal(known.Length, (await session.GetBlocksetAsync(id)).BlockCount);
    }

    [PostgresFact]
    public async Task The_shared_session_sends_each_batch_of_files_in_one_round_trip_that_looks_their_keys_up_twice()
    {
        var log = new CapturingLoggerFactory();
        await using var db = OpenLogged(log);
        await using var shared = db.OpenSharedSession();
        await shared.SelectXorInsertAsync(TestData.Block(100_000, 4096));
        log.Messages.Clear();
        var before = shared.CommittedBatches;
        await Task.WhenAll(Enumerable.Range(0, 8).Select(c => Task.Run(async () =>
        {
            for (var f = 0; f < 10; f++)
            {
                var blocks = Enumerable.Range(0, 1 + (f % 3)).Select(b => TestData.Block((((c * 10) + f) * 3) + b, 4096)).ToArray();
                await shared.AddBlocksetAsync(blocks, new SelectXorInsertResult[blocks.Length], TestData.Bytes((c * 10) + f));
            }
        })));

        var trips = RoundTrips(log);
        Assert.Equal(shared.CommittedBatches - before, trips.Count);
        Assert.All(trips, trip => Assert.Equal(2, KeyLookups(trip)));
    }

    private IBlockDatabase OpenLogged(CapturingLoggerFactory log) =>
        new BlockDatabaseBuilder(new BlockDbOptions { Provider = ProviderCatalog.PostgreSql, ConnectionString = ConnectionString }).UseLoggerFactory(log).Build();

    /// <summary>The text of each round trip Npgsql completed (a command, or a batch of statements).</summary>
    private static List<string> RoundTrips(CapturingLoggerFactory log) =>
        [.. log.Messages.Where(m => m.Name is "CommandExecutionCompleted" or "BatchExecutionCompleted").Select(m => m.Text)];

    /// <summary>How often the statements look a block up by its key (a join or a probe on <c>"Block" b</c> by hash).</summary>
    private static int KeyLookups(string roundTrip) => KeyLookup().Count(roundTrip);

    [GeneratedRegex("""b\."Hash" = """)]
    private static partial Regex KeyLookup();
}
