namespace BlockDb.Tests.Blocks;

/// <summary>
/// <see cref="BlockKey"/>, the one way to name a block: its constructor checks the hash and the size, Duplicati's base64
/// text parses to it and formats from it, and <c>default(BlockKey)</c>, the one key the constructor cannot make, is refused
/// by every call that takes a block, on every provider and layout, through a session and the shared session.
/// </summary>
public sealed class BlockKeyTests : ConformanceTestBase
{
    [Fact]
    public void The_constructor_refuses_an_empty_hash_and_a_size_below_one_byte()
    {
        Assert.Equal("hash", Assert.Throws<ArgumentException>(() => new BlockKey(default, 10)).ParamName);
        Assert.Equal("size", Assert.Throws<ArgumentOutOfRangeException>(() => new BlockKey(TestData.Bytes(1), 0)).ParamName);
        Assert.Throws<ArgumentOutOfRangeException>(() => new BlockKey(TestData.Bytes(1), -1));
        var key = new BlockKey(TestData.Bytes(1), 1);
        Assert.Equal((TestData.Bytes(1), 1L), (key.Hash, key.Size));
    }

    [Fact]
    public void Parse_reads_duplicatis_base64_text_and_ToString_writes_it_back_with_the_size()
    {
        var key = BlockKey.Parse(TestData.Hash(7), 4096);
        Assert.Equal(new BlockKey(TestData.Bytes(7), 4096), key);
        Assert.Equal($"{TestData.Hash(7)}:4096", key.ToString());
        Assert.True(BlockKey.TryParse(TestData.Hash(7), 4096, out var parsed));
        Assert.True(parsed == key);
        Assert.Equal(key.GetHashCode(), parsed.GetHashCode());
        Assert.True(key != BlockKey.Parse(TestData.Hash(7), 4097));
        Assert.NotEqual(key, BlockKey.Parse(TestData.Hash(8), 4096));
    }

    [Theory]
    [InlineData("", 10, typeof(ArgumentException))]
    [InlineData("AB==", 10, typeof(ArgumentException))]
    [InlineData("not base64", 10, typeof(ArgumentException))]
    [InlineData("AA==", 0, typeof(ArgumentOutOfRangeException))]
    public void Parse_refuses_what_is_not_a_block_with_a_typed_error_and_TryParse_says_false(string text, long size, Type expected)
    {
        Assert.IsType(expected, Assert.ThrowsAny<ArgumentException>(() => BlockKey.Parse(text, size)));
        Assert.False(BlockKey.TryParse(text, size, out var none));
        Assert.Equal(default, none);
        Assert.Throws<ArgumentNullException>(() => BlockKey.Parse(null!, 10));
        Assert.False(BlockKey.TryParse(null, 10, out _));
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithSessionKinds))]
    public async Task Every_call_that_takes_a_block_refuses_the_default_key_before_anything_is_written(string provider, BlockLayout layout, string repository)
    {
        Use(provider, layout);
        await using var db = Open();
        await using var session = await db.OpenSessionAsync();
        await using var shared = db.OpenSharedSession();
        var (reader, writer) = repository == "session" ? ((IBlockReader)session, (IBlockWriter)session) : (shared, shared);
        var results = new SelectXorInsertResult[2];

        Assert.Equal("block", (await Assert.ThrowsAsync<ArgumentException>(async () => await reader.FindBlockAsync(default))).ParamName);
        Assert.Equal("block", (await Assert.ThrowsAsync<ArgumentException>(async () => await writer.SelectXorInsertAsync(default))).ParamName);
        Assert.Equal("blocks", (await Assert.ThrowsAsync<ArgumentException>(async () => await writer.SelectXorInsertManyAsync(new[] { TestData.Block(1), default }, results))).ParamName);
        Assert.Equal("blocks", (await Assert.ThrowsAsync<ArgumentException>(async () => await writer.AddBlocksetAsync(new[] { TestData.Block(1), default }, results))).ParamName);
        Assert.Equal("blocks", (await Assert.ThrowsAsync<ArgumentException>(async () => await writer.AddBlocksetAsync(new[] { default(BlockKey) }))).ParamName);
        Assert.Equal(new BlockDbCounts(0, 0, 0), await reader.GetCountsAsync());
    }
}
