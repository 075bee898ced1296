using BlockDb.Tests.Duplicati;
using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.WholeCall;

/// <summary>
/// On a Duplicati database too, a one-call file refused after its blocks went in (its blocklist block is not stored)
/// leaves none of them: the caller reads nothing from a call that threw, so a block kept would be uploaded by no one.
/// Every provider, on BlockDb's own connection and in the caller's transaction.
/// </summary>
public sealed class DuplicatiRefusedWriteCallTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Modes() => DuplicatiMode.All();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_file_refused_for_a_missing_blocklist_block_leaves_none_of_its_new_blocks_and_a_later_file_creates_them(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        var file = File("whole", 3);
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            var volume = await s.RegisterVolumeAsync("duplicati-bwhole.dblock.zip");
            var earlier = await s.SelectXorInsertAsync(Key("earlier", 0), volume);
            var results = new SelectXorInsertResult[file.Count];
            await Assert.ThrowsAsync<BlockNotFoundException>(async () => await s.AddBlocksetAsync(file.ToArray(), results, BlockHash.Parse(FullHash("whole")), volume));
            foreach (var block in file)
            {
                Assert.Null(await s.FindBlockAsync(block));
            }

            foreach (var block in Blocklists(file))
            {
                await s.SelectXorInsertAsync(block, volume);
            }

            await s.AddBlocksetAsync(file.ToArray(), results, BlockHash.Parse(FullHash("whole")), volume);
            Assert.All(results, r => Assert.True(r.Created));
            Assert.Equal(earlier.Id, await s.FindBlockAsync(Key("earlier", 0)));
        }

        await AssertCleanAsync(path);
    }

    /// <summary>Every SQLite provider on BlockDb's own connection (in the caller's transaction the call's step savepoint is its unit).</summary>
    public static IEnumerable<object[]> OwnModes() => DuplicatiMode.All().Where(m => !((DuplicatiMode)m[0]).Caller);

    [Theory]
    [MemberData(nameof(OwnModes))]
    public async Task A_write_failing_after_the_checks_fails_only_its_call_until_the_volume_is_found_fit_and_then_rolls_back_the_batch(DuplicatiMode mode)
    {
        // A committed block of 7 bytes and a foreign index that refuses a second one: the file's last block fails.
        var path = template.CopyTo(_folder);
        await using (var setup = await DuplicatiScope.OpenAsync(path, mode))
        {
            await setup.Session.SelectXorInsertAsync(Key("seven", 0, 7), await setup.Session.RegisterVolumeAsync("duplicati-bseven.dblock.zip"));
            await setup.Session.CommitAsync();
        }

        using (var foreign = new RawSql(path, mode.Provider))
        {
            foreign.Execute("""CREATE UNIQUE INDEX "RefuseSeven" ON "Block" ("Size") WHERE "Size" = 7""");
        }

        var file = File("fails", 3, last: 7);
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var s = scope.Session;
            var volume = await s.RegisterVolumeAsync("duplicati-bfails.dblock.zip");
            var other = await s.RegisterVolumeAsync("duplicati-bother.dblock.zip");
            await s.CommitAsync();

            // The file's volume not yet found fit in this transaction (a missing block could be taken back without it):
            // its writes take a savepoint, and the failure is the call's alone.
            var earlier = await s.SelectXorInsertAsync(Key("earlier", 0), other);
            foreach (var block in Blocklists(file))
            {
                await s.SelectXorInsertAsync(block, other);
            }

            var results = new SelectXorInsertResult[file.Count];
            var failed = await Assert.ThrowsAnyAsync<BlockDbException>(async () => await s.AddBlocksetAsync(file.ToArray(), results, BlockHash.Parse(FullHash("fails")), volume));
            Assert.IsNotType<BlockDbBatchRolledBackException>(failed);
            Assert.Equal(SqliteResultCode.Constraint, failed.SqliteErrorCode);
            Assert.Equal(earlier.Id, await s.FindBlockAsync(Key("earlier", 0)));
            Assert.Null(await s.FindBlockAsync(file[0]));

            // Once a block went into the volume in this transaction, the writes take none: the failure rolls the batch back.
            await s.SelectXorInsertAsync(Key("fit", 0), volume);
            var lost = await Assert.ThrowsAsync<BlockDbBatchRolledBackException>(async () => await s.AddBlocksetAsync(file.ToArray(), results, BlockHash.Parse(FullHash("fails")), volume));
            Assert.Equal(SqliteResultCode.Constraint, lost.SqliteErrorCode);
            foreach (var block in file.Append(Key("earlier", 0)).Append(Key("fit", 0)))
            {
                Assert.Null(await s.FindBlockAsync(block));
            }
        }

        using (var foreign = new RawSql(path, mode.Provider))
        {
            foreign.Execute("""DROP INDEX "RefuseSeven" """);
        }

        await AssertCleanAsync(path);
    }
}
