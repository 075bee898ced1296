using BlockDb.MicrosoftData;
using BlockDb.Opening;
using BlockDb.Tests.WholeCall;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.CallerTransaction;

/// <summary>
/// In a caller's transaction (X1): random sequences of span select-xor-inserts and one-call files (1 to 33 blocks with
/// repeats), refused calls (a new block for a deleting volume, a found block in one, a length past the largest), the
/// caller's commits and rollbacks, blockset deletes and collections, checked after every step against a model: every
/// result's ID and <c>Created</c>, every block found, the counts. A call that throws leaves nothing of itself and the
/// caller's transaction keeps what came before it (B5, X1).
/// </summary>
public sealed class CallerWholeCallModelTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static IEnumerable<object[]> Cases() =>
        from layout in new[] { BlockLayout.TextHash, BlockLayout.BlobHash }
        from seed in new[] { 1, 2, 3 }
        select new object[] { layout, seed };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Random_whole_calls_refusals_and_caller_commits_keep_exactly_what_the_model_keeps(BlockLayout layout, int seed)
    {
        var path = _folder.File($"caller-{layout}-{seed}.db");
        using (new BlockDatabaseBuilder(new BlockDbOptions { DataSource = path, Index = { Layout = layout } }).UseSqliteDriver(MicrosoftDataDriver.Instance).Build())
        {
        }

        var random = new Random(seed);
        using var caller = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false, DefaultTimeout = 2 }.ToString());
        caller.Open();
        var transaction = caller.BeginTransaction(deferred: true);
        var model = new WholeCallModel();
        await using (var db = new BlockDatabaseBuilder(new BlockDbOptions()).UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(caller)).Build())
        await using (var session = await db.OpenSessionAsync())
        {
            await model.SetUpVolumesAsync(session);
            transaction.Commit();
            transaction = caller.BeginTransaction(deferred: true);
            model.Commit();

            for (var step = 0; step < 150; step++)
            {
                var what = random.Next(100);
                var trace = $"seed {seed}, step {step}, op {what}";
                if (await model.TryWriteStepAsync(what, random, session, session, trace))
                {
                    // A span, a one-call file or one block, checked by the model.
                }
                else if (what < 78)
                {
                    transaction.Commit();
                    transaction = caller.BeginTransaction(deferred: true);
                    model.Commit();
                }
                else if (what < 84)
                {
                    transaction.Rollback();
                    transaction = caller.BeginTransaction(deferred: true);
                    model.Rollback();
                }
                else if (what < 90 && model.Blocksets.Count > 0)
                {
                    await model.DeleteBlocksetAsync(random, session);
                }
                else
                {
                    await model.CollectAsync(session);
                }

                await model.AssertMatchesAsync(session, trace);
            }
        }

        transaction.Commit();
    }
}
