using System.Buffers.Binary;
using System.IO.Hashing;
using BlockDb.KeyMap;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The key-map snapshot's threat model (docs/RELIABILITY.md): its checksum finds damage, not forgery. Someone who can
/// write the database's folder can write a snapshot that passes every check; what it costs is bounded: duplicate blocks,
/// which <see cref="IBlockDatabase.CheckAsync"/> reports and <see cref="IBlockDatabase.RepairAsync"/> merges, never an
/// ID that names another block.
/// </summary>
public sealed class ForgedSnapshotTests : IDisposable
{
    private const int Blocks = 200;
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    public static TheoryData<string> SqliteProviders() => ["PInvoke", "SystemData", "MicrosoftData"];

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task A_forged_empty_snapshot_costs_duplicates_that_check_reports_and_repair_merges_never_a_wrong_id(string provider)
    {
        var path = _folder.File("forged.db");
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = BlockLayout.KeyMap } };
        var ids = new long[Blocks];
        await using (var db = BlockDatabase.Open(options))
        await using (var session = await db.OpenSessionAsync())
        {
            for (var i = 0; i < Blocks; i++)
            {
                ids[i] = (await session.SelectXorInsertAsync(TestData.Block(i, 100 + i))).Id;
            }
        }

        ForgeEmpty(KeyMapFileFormat.PathOf(path));

        var log = new CapturingLoggerFactory();
        int created;
        await using (var db = new BlockDatabaseBuilder(options).UseLoggerFactory(log).Build())
        {
            await using (var session = await db.OpenSessionAsync())
            {
                created = 0;
                for (var i = 0; i < Blocks; i++)
                {
                    var result = await session.SelectXorInsertAsync(TestData.Block(i, 100 + i));
                    Assert.Equal(new BlockInfo(result.Id, TestData.Block(i, 100 + i), null), await session.GetBlockAsync(result.Id));
                    created += result.Created ? 1 : 0;
                }

                await session.CommitAsync();
            }

            // The forged map was taken (its checksum and every check passed), so each block was inserted again.
            Assert.Contains(log.Messages, m => m.Id == 10 && m.Text.Contains("from snapshot", StringComparison.Ordinal));
            Assert.Equal(Blocks, created);

            var check = await db.CheckAsync();
            Assert.True(check.Duplicates.Found);
            Assert.Equal(Blocks, check.DuplicateGroups);

            await db.RepairAsync();
            Assert.True((await db.CheckAsync()).IsClean);
            await using var reader = await db.OpenSessionAsync();
            for (var i = 0; i < Blocks; i++)
            {
                Assert.Equal(ids[i], await reader.FindBlockAsync(TestData.Block(i, 100 + i)));
            }
        }
    }

    /// <summary>Empties every slot of a snapshot, sets its entry count to 0 and recomputes its checksum: what anyone who can write the folder can do.</summary>
    private static void ForgeEmpty(string snapshot)
    {
        var bytes = File.ReadAllBytes(snapshot);
        var capacity = BinaryPrimitives.ReadInt64LittleEndian(bytes.AsSpan(168));
        bytes.AsSpan(KeyMapFileHeader.Bytes, (int)capacity * 8).Clear();
        BinaryPrimitives.WriteInt64LittleEndian(bytes.AsSpan(176), 0);
        XxHash128.Hash(bytes.AsSpan(0, bytes.Length - KeyMapFileHeader.ChecksumBytes), bytes.AsSpan(bytes.Length - KeyMapFileHeader.ChecksumBytes));
        File.WriteAllBytes(snapshot, bytes);
    }
}
