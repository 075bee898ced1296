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
    [InlineData("AAAA AA=")]
    [InlineData("AAA\nAAA=")]
    [InlineData("AAAAAA=\t")]
    [InlineData("AA-_AAAA")]
    [InlineData("AA==AAAA")]
    [InlineData("====")]
    [InlineData("AAAA\u00e9AA=")]
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

    [Fact]
    public void Parsing_agrees_with_a_per_character_reference_on_random_texts()
    {
        // Random texts over the alphabet's edges (padding, whitespace, the URL-safe characters, non-ASCII) and lengths
        // around the multiples of four: the vectorised decoder must accept exactly what a per-character check of
        // canonical padded standard base64 accepts, and give the same bytes.
        const string Characters = "AQgw+/=9 \t-_\u00e9";
        var random = new Random(2311);
        var accepted = 0;
        for (var run = 0; run < 200_000; run++)
        {
            var text = new string(Enumerable.Range(0, random.Next(0, 14)).Select(_ => Characters[random.Next(Characters.Length)]).ToArray());
            var expected = Reference(text);
            Assert.True(BlockHash.TryParse(text, out var hash) == (expected is not null), $"'{text}'");
            Assert.Equal(expected is not null, BlockHash.IsValid(text));
            if (expected is not null)
            {
                Assert.Equal(expected, hash.Bytes.ToArray());
                accepted++;
            }
        }

        Assert.InRange(accepted, 100, 200_000);
    }

    private static byte[]? Reference(string text)
    {
        if (text.Length == 0 || text.Length > BlockHash.MaxLength || text.Length % 4 != 0)
        {
            return null;
        }

        var padding = text.EndsWith("==", StringComparison.Ordinal) ? 2 : text.EndsWith('=') ? 1 : 0;
        var body = text[..^padding];
        if (body.Length == 0 || !body.All(c => char.IsAsciiLetterOrDigit(c) || c == '+' || c == '/'))
        {
            return null;
        }

        var bytes = Convert.FromBase64String(text);
        return Convert.ToBase64String(bytes) == text ? bytes : null;
    }
}
