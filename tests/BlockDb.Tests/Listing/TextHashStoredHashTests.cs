using BlockDb.Opening;
using BlockDb.Tests.Conformance;

namespace BlockDb.Tests.Listing;

/// <summary>
/// The TextHash layout stores a block's hash as base64 text; listing a blockset into a buffer decodes each stored text
/// from its UTF-8 bytes (no string). A stored text that is not a canonical hash (written by another program) is refused
/// with <see cref="BlockDbFormatException"/>, never listed as some other hash.
/// </summary>
public sealed class TextHashStoredHashTests : ConformanceTestBase
{
    public static TheoryData<string, string> BadTexts()
    {
        var data = new TheoryData<string, string>();
        foreach (var provider in ProviderCatalog.SqliteNames)
        {
            data.Add(provider, "AB=="); // decodes like "AA==" but is not its canonical text
            data.Add(provider, "not base64!");
            data.Add(provider, new string('A', 92)); // longer than any hash text (88 characters)
            data.Add(provider, "QUJD\u00e9QUJD"); // a non-ASCII character
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(BadTexts))]
    public async Task Listing_a_blockset_whose_stored_hash_text_is_not_canonical_is_refused(string provider, string stored)
    {
        Use(provider, BlockLayout.TextHash);
        long blockset;
        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            var keys = new[] { TestData.Block(1, 100), TestData.Block(2, 100) };
            blockset = await session.AddBlocksetAsync(keys, new SelectXorInsertResult[2], TestData.Bytes(77));
            var listed = new BlocksetBlock[2];
            Assert.Equal(2, await session.ListBlocksetBlocksAsync(blockset, 0, listed));
            Assert.Equal(keys[1].Hash, listed[1].Block.Hash);
        }

        using (var raw = new RawSql(DbPath))
        {
            raw.Execute($"""UPDATE "Block" SET "Hash" = '{stored}' WHERE "ID" = (SELECT MAX("ID") FROM "Block")""");
        }

        await using (var db = Open())
        await using (var session = await db.OpenSessionAsync())
        {
            var e = await Assert.ThrowsAsync<BlockDbFormatException>(async () => await session.ListBlocksetBlocksAsync(blockset, 0, new BlocksetBlock[2]));
            Assert.Contains("not canonical base64 of 1 to 66 bytes", e.Message, StringComparison.Ordinal);
        }
    }
}
