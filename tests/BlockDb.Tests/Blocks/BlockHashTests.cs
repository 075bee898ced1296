namespace BlockDb.Tests.Blocks;

/// <summary><see cref="BlockHash"/> as a value: bytes held inline, the base64 text form, and what it refuses.</summary>
public sealed class BlockHashTests
{
    [Fact]
    public void Text_and_bytes_round_trip()
    {
        var text = TestData.Hash(5);
        var parsed = BlockHash.Parse(text);
        Assert.Equal(32, parsed.Length);
        Assert.Equal(text, parsed.ToString());
        Assert.Equal(TestData.Bytes(5), parsed);
        Assert.True(parsed == TestData.Bytes(5));
        Assert.Equal(TestData.Bytes(5).GetHashCode(), parsed.GetHashCode());
        Assert.NotEqual(TestData.Bytes(6), parsed);
        Assert.Equal(Convert.FromBase64String(text), parsed.Bytes.ToArray());
    }

    [Theory]
    [InlineData(1)]
    [InlineData(32)]
    [InlineData(64)]
    [InlineData(66)]
    public void Any_length_from_1_to_66_bytes_is_a_hash(int length)
    {
        var bytes = Enumerable.Range(1, length).Select(i => (byte)i).ToArray();
        var hash = new BlockHash(bytes);
        Assert.Equal(length, hash.Length);
        Assert.Equal(hash, BlockHash.Parse(hash.ToString()));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(67)]
    public void Other_lengths_are_refused(int length) =>
        Assert.Contains("1 to 66 bytes", Assert.Throws<ArgumentException>(() => new BlockHash(new byte[length])).Message, StringComparison.Ordinal);

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("AB==")]
    [InlineData("not base64")]
    public void Invalid_texts_do_not_parse(string? text)
    {
        Assert.False(BlockHash.TryParse(text, out var hash));
        Assert.True(hash.IsEmpty);
        Assert.ThrowsAny<ArgumentException>(() => BlockHash.Parse(text!));
    }

    [Fact]
    public void The_default_value_is_empty_and_refused()
    {
        Assert.True(default(BlockHash).IsEmpty);
        Assert.Equal(string.Empty, default(BlockHash).ToString());
        Assert.Throws<ArgumentException>(() => BlockHash.Validate(default(BlockHash), "hash"));
    }
}
