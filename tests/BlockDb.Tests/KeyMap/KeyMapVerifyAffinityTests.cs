using System.Globalization;
using Xunit.Abstractions;

namespace BlockDb.Tests.KeyMap;

/// <summary>
/// The key map's verification read [M1] lets SQLite compare the row with the bound BLOB hash and integer size
/// (<c>VerifyBlockId</c>, <c>VerifyBlockIdWithVolume</c>, <c>GetBlocksByIdWithVolume</c>). Claim: a row whose size is
/// not an integer is never taken, "the column's affinity converts neither". But BlockDb does not check the declared
/// types of a KeyMap file's <c>Block</c> table: a file whose table another tool rebuilt with plain DDL (a <c>Size</c>
/// column of no declared type, BLOB affinity) opens, gets its guards back and works. There a REAL <c>10.0</c> stays a
/// REAL, and SQLite compares a REAL and an INTEGER by value: <c>"Size" = 10</c> holds, so the row BlockDb's own check
/// calls unusable (its size is not an integer) was returned for the block. The verification SQL keeps
/// <c>typeof("Size") = 'integer'</c> for that (the hash needs none: a BLOB equals only a BLOB of the same bytes).
/// </summary>
public sealed class KeyMapVerifyAffinityTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    [Theory]
    [InlineData("", "find")]
    [InlineData("", "select-xor-insert")]
    [InlineData("", "one-call file")]
    [InlineData("BLOB", "find")]
    [InlineData("BLOB", "one-call file")]
    public async Task A_real_size_is_never_returned_for_an_integer_size_whatever_the_column_declares(string declared, string call)
    {
        var name = $"affinity-{declared}-{call.Replace(' ', '-')}.db";
        var path = Folder.File(name);
        await using (var db = Open(name))
        await using (var session = await db.OpenSessionAsync())
        {
            await SeedAsync(session, 3);
        }

        long foreignId;
        using (var raw = new RawSql(path))
        {
            // Plain DDL: the table rebuilt with the same rows (its guards go with it; BlockDb restores them on open).
            raw.Execute("BEGIN IMMEDIATE");
            raw.Execute($"""CREATE TABLE "BlockRebuilt" ("ID" INTEGER PRIMARY KEY, "Hash" BLOB NOT NULL, "Size" {declared} NOT NULL, "VolumeID" INTEGER NULL)""");
            raw.Execute("""INSERT INTO "BlockRebuilt" SELECT "ID", "Hash", "Size", "VolumeID" FROM "Block" """);
            raw.Execute("""DROP TABLE "Block" """);
            raw.Execute("""ALTER TABLE "BlockRebuilt" RENAME TO "Block" """);
            raw.Execute("""CREATE INDEX "BlockVolume" ON "Block" ("VolumeID")""");
            raw.Execute($"""INSERT INTO "Block" ("Hash", "Size") VALUES ({HexOf(TestData.Hash(100))}, 10.0)""");
            foreignId = raw.Scalar("SELECT last_insert_rowid()");
            raw.Execute("COMMIT");
            Assert.Equal("real", raw.Text(string.Create(CultureInfo.InvariantCulture, $"""SELECT typeof("Size") FROM "Block" WHERE "ID" = {foreignId}""")));
        }

        await using (var db = Open(name))
        await using (var session = await db.OpenSessionAsync())
        {
            // The file works: its own blocks are found, a new block is stored.
            Assert.Equal(1, await session.FindBlockAsync(TestData.Block(0, 10)));
            Assert.True((await session.SelectXorInsertAsync(TestData.Block(50, 10))).Created);

            string answer;
            switch (call)
            {
                case "find":
                    var found = await session.FindBlockAsync(TestData.Block(100, 10));
                    answer = found?.ToString(CultureInfo.InvariantCulture) ?? "null";
                    Assert.True(found is null, $"FindBlock(Hash(100), 10) returned {answer}, the row whose size is the REAL 10.0 (ID {foreignId}).");
                    break;
                case "select-xor-insert":
                    var result = await session.SelectXorInsertAsync(TestData.Block(100, 10));
                    Assert.True(result.Created && result.Id != foreignId, $"SelectXorInsert(Hash(100), 10) returned {result}; the row whose size is the REAL 10.0 is ID {foreignId}.");
                    break;
                default:
                    var results = new SelectXorInsertResult[2];
                    await session.AddBlocksetAsync(new[] { TestData.Block(0, 10), TestData.Block(100, 10) }, results);
                    Assert.Equal(new SelectXorInsertResult(1, false), results[0]);
                    Assert.True(results[1].Created && results[1].Id != foreignId, $"AddBlockset gave {results[1]} for Hash(100), 10; the row whose size is the REAL 10.0 is ID {foreignId}.");
                    break;
            }

            await session.CommitAsync();
            var check = await db.CheckAsync();
            Assert.Equal([foreignId], check.UnusableBlocks.FirstIds); // BlockDb's own check: that row is unusable
        }
    }
    /// <summary>
    /// The bound comparison at the edges of what a lookup can ask for: hashes of 1 and 66 bytes, sizes 1 and
    /// 2^63 - 1, and two sizes a double cannot tell apart (2^63 - 1 and 2^63 - 2): each block is found at its own ID
    /// by a find, a select-xor-insert and a one-call file (one statement for many candidates), never at its neighbour's.
    /// </summary>
    [Fact]
    public async Task Blocks_at_the_edges_of_hash_length_and_size_are_each_found_at_their_own_id()
    {
        var blocks = new[]
        {
            new BlockKey(new BlockHash(new byte[] { 7 }), 1),
            new BlockKey(new BlockHash(new byte[] { 7 }), long.MaxValue),
            new BlockKey(new BlockHash(new byte[] { 7 }), long.MaxValue - 1),
            new BlockKey(new BlockHash(Enumerable.Repeat((byte)0xAB, BlockHash.MaxBytes).ToArray()), long.MaxValue),
            new BlockKey(new BlockHash(Enumerable.Repeat((byte)0xAB, BlockHash.MaxBytes).ToArray()), long.MaxValue - 1),
            new BlockKey(new BlockHash(Enumerable.Repeat((byte)0xAB, BlockHash.MaxBytes - 1).ToArray()), long.MaxValue),
        };
        await using var db = Open("edges.db");
        await using var session = await db.OpenSessionAsync();
        var ids = new long[blocks.Length];
        for (var i = 0; i < blocks.Length; i++)
        {
            var created = await session.SelectXorInsertAsync(blocks[i]);
            Assert.True(created.Created, $"block {i} was taken for another: {created}");
            ids[i] = created.Id;
        }

        await session.CommitAsync();
        for (var i = 0; i < blocks.Length; i++)
        {
            Assert.Equal(ids[i], await session.FindBlockAsync(blocks[i]));
            Assert.Equal(new SelectXorInsertResult(ids[i], false), await session.SelectXorInsertAsync(blocks[i]));
        }

        // A file's length must fit 64 bits: one file per large block, and one of many candidates whose sizes a double
        // cannot tell apart (2^53 and 2^53 + 1), verified by one statement.
        for (var i = 0; i < blocks.Length; i++)
        {
            var one = new SelectXorInsertResult[1];
            var single = await session.AddBlocksetAsync(new[] { blocks[i] }, one);
            Assert.Equal(new SelectXorInsertResult(ids[i], false), one[0]);
            Assert.Equal(blocks[i], Assert.Single(await session.ListBlocksetBlocksAsync(single)).Block);
        }

        const long Exact = 1L << 53;
        var many = Enumerable.Range(0, 10).SelectMany(i => new[] { new BlockKey(TestData.Bytes(i), Exact), new BlockKey(TestData.Bytes(i), Exact + 1) }).ToArray();
        var manyIds = new long[many.Length];
        for (var i = 0; i < many.Length; i++)
        {
            manyIds[i] = (await session.SelectXorInsertAsync(many[i])).Id;
        }

        await session.CommitAsync();
        var file = many.Reverse().Concat(many.Take(12)).ToArray();
        var results = new SelectXorInsertResult[file.Length];
        var blockset = await session.AddBlocksetAsync(file, results);
        await session.CommitAsync();
        Assert.Equal(manyIds.Reverse().Concat(manyIds.Take(12)).Select(id => new SelectXorInsertResult(id, false)), results);
        Assert.Equal(file, (await session.ListBlocksetBlocksAsync(blockset)).Select(b => b.Block));
    }
}
