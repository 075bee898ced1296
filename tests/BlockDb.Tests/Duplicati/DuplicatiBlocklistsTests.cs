using BlockDb.Duplicati.Fixture;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// <see cref="DuplicatiBlocklists"/> cuts a file's binary block hashes as Duplicati's splitter does: none for 0 or 1 block,
/// else ⌈n / H⌉ blocklists of H hashes (H = blocksize / hashsize, the tail bytes of a blocksize that is no multiple of
/// the hash size unused), the last one shorter; checked at the edges for every hash Duplicati knows.
/// </summary>
public sealed class DuplicatiBlocklistsTests
{
    public static IEnumerable<object[]> Edges() =>
        from hash in new[] { "SHA256", "SHA1", "MD5", "SHA384", "SHA512" }
        from blocksize in new[] { 1024, 1000 }
        let perList = blocksize / DuplicatiHash.SizeOf(hash)
        from n in new[] { 0, 1, 2, perList - 1, perList, perList + 1, (2 * perList) + 1 }
        select new object[] { hash, blocksize, n };

    [Theory]
    [MemberData(nameof(Edges))]
    public void Blocklists_are_the_concatenated_binary_hashes_cut_every_blocksize_over_hashsize_hashes(string hash, int blocksize, int n)
    {
        var hashSize = DuplicatiHash.SizeOf(hash);
        var perList = blocksize / hashSize;
        var rng = new Random(n + blocksize);
        var binary = Enumerable.Range(0, n).Select(_ => { var b = new byte[hashSize]; rng.NextBytes(b); return b; }).ToList();
        var keys = binary.Select(b => BlockKey.Parse(Convert.ToBase64String(b), blocksize)).ToArray();

        // Independently: all hashes in one buffer, then cut.
        var all = binary.SelectMany(b => b).ToArray();
        var expected = n <= 1 ? [] : all.Chunk(perList * hashSize).ToList();

        Assert.Equal(expected.Count, DuplicatiBlocklists.Count(n, blocksize, hashSize));
        var buffer = new byte[blocksize];
        for (var k = 0; k < expected.Count; k++)
        {
            var size = DuplicatiBlocklists.Write(keys, k, blocksize, hashSize, buffer);
            Assert.Equal(expected[k], buffer[..size]);
        }

        Assert.Throws<ArgumentOutOfRangeException>(() => DuplicatiBlocklists.Write(keys, expected.Count, blocksize, hashSize, buffer));
    }

    [Fact]
    public void A_hash_of_another_size_or_a_short_destination_is_refused()
    {
        var keys = new[] { BlockKey.Parse(Convert.ToBase64String(new byte[32]), 1024), BlockKey.Parse(Convert.ToBase64String(new byte[20]), 10) };
        Assert.Throws<ArgumentException>(() => DuplicatiBlocklists.Write(keys, 0, 1024, 32, new byte[1024]));
        keys[1] = keys[0];
        Assert.Throws<ArgumentException>(() => DuplicatiBlocklists.Write(keys, 0, 1024, 32, new byte[63]));
        Assert.Equal(64, DuplicatiBlocklists.Write(keys, 0, 1024, 32, new byte[64]));
        Assert.Throws<ArgumentOutOfRangeException>(() => DuplicatiBlocklists.Count(2, 16, 32));
        Assert.Throws<ArgumentOutOfRangeException>(() => DuplicatiBlocklists.Count(-1, 1024, 32));
    }
}
