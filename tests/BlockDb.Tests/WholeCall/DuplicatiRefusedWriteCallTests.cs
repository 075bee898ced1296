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
}
