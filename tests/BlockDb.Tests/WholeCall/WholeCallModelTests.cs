namespace BlockDb.Tests.WholeCall;

/// <summary>
/// Random sequences of span select-xor-inserts and one-call files (spans of 1 to 33 blocks with repeats), refused calls
/// (a new block for a deleting volume, a found block in one, a length past the largest), commits, rollbacks, a foreign
/// writer on the file, collections and reopening, checked after every step against a model of what must be stored:
/// every result's ID and <c>Created</c>, every block found, the counts. A call that throws leaves nothing of itself and
/// the batch before it stays (B5); a commit after every write or after a few keeps what it committed.
/// </summary>
public sealed class WholeCallModelTests : ConformanceTestBase
{
    public static IEnumerable<object[]> MatrixWithSeeds() =>
        from pair in ProviderMatrix()
        from kind in new[] { "session", "shared" }
        from seed in new[] { 1, 2, 3 }
        select new object[] { pair[0], pair[1], kind, seed };

    [Theory]
    [MemberData(nameof(MatrixWithSeeds))]
    public async Task Random_whole_calls_refusals_and_commits_keep_exactly_what_the_model_keeps(string provider, BlockLayout layout, string kind, int seed)
    {
        Use(provider, layout);
        var shared = kind == "shared";
        var random = new Random(seed);
        var commitEvery = new[] { 0, 1, 3 }[seed % 3];
        var model = new WholeCallModel();
        var db = Open(o => o.Batching.CommitEvery = commitEvery);
        var session = await db.OpenSessionAsync();
        var sharedSession = shared ? db.OpenSharedSession() : null;
        IBlockWriter w = (IBlockWriter?)sharedSession ?? session;
        IBlockReader r = (IBlockReader?)sharedSession ?? session;
        try
        {
            await model.SetUpVolumesAsync(session);
            await session.CommitAsync();
            model.Commit();

            for (var step = 0; step < 150; step++)
            {
                var what = random.Next(100);
                var trace = $"seed {seed}, step {step}, op {what}";
                if (await model.TryWriteStepAsync(what, random, w, r, trace))
                {
                    // A span, a one-call file or one block, checked by the model.
                }
                else if (what < 82 && shared)
                {
                    // The shared session commits every call.
                }
                else if (what < 76)
                {
                    await session.CommitAsync();
                    model.Commit();
                }
                else if (what < 82)
                {
                    await session.RollbackAsync();
                    model.Rollback();
                }
                else if (what < 86 && model.Blocksets.Count > 0)
                {
                    await model.DeleteBlocksetAsync(random, w);
                }
                else if (what < 90)
                {
                    await model.CollectAsync(w);
                }
                else if (what < 95 && shared)
                {
                }
                else if (what < 95)
                {
                    // A foreign writer: another database on the file, between this session's transactions.
                    await session.CommitAsync();
                    model.Commit();
                    await using (var other = Open())
                    await using (var foreign = await other.OpenSessionAsync())
                    {
                        var keys = WholeCallModel.Keys(random);
                        var results = new SelectXorInsertResult[keys.Length];
                        await foreign.SelectXorInsertManyAsync(keys, results, model.Live);
                        model.Apply(keys, results, trace + " (foreign)");
                        await foreign.CommitAsync();
                    }

                    model.Commit();
                    await session.CommitAsync(); // ends the read transaction: the next read sees the foreign rows
                }
                else
                {
                    await session.CommitAsync();
                    model.Commit();
                    if (sharedSession is not null)
                    {
                        await sharedSession.DisposeAsync();
                    }

                    await session.DisposeAsync();
                    await db.DisposeAsync();
                    db = Open(o => o.Batching.CommitEvery = commitEvery);
                    session = await db.OpenSessionAsync();
                    sharedSession = shared ? db.OpenSharedSession() : null;
                    w = (IBlockWriter?)sharedSession ?? session;
                    r = (IBlockReader?)sharedSession ?? session;
                }

                if (shared || session.PendingWrites == 0)
                {
                    model.Commit(); // the policy committed (or nothing was written)
                }

                await model.AssertMatchesAsync(r, trace);
            }

            await session.CommitAsync();
            model.Commit();
        }
        finally
        {
            if (sharedSession is not null)
            {
                await sharedSession.DisposeAsync();
            }

            await session.DisposeAsync();
            await db.DisposeAsync();
        }

        await using var reopened = Open();
        await using var check = await reopened.OpenSessionAsync();
        await model.AssertMatchesAsync(check, "reopened");
    }
}
