namespace BlockDb.Bench.Data;

/// <summary>Accumulates a <see cref="BlockStream"/>, item by item.</summary>
internal sealed class StreamBuilder
{
    private readonly List<string> _hashes = [];
    private readonly List<long> _sizes = [];
    private readonly List<int> _prefill = [];
    private readonly List<int> _groupStarts = [];
    private readonly List<string?> _fullHashes = [];

    public int Count => _hashes.Count;

    public string HashAt(int item) => _hashes[item];

    public long SizeAt(int item) => _sizes[item];

    public void Add(string hash, long size, int prefillIndex)
    {
        _hashes.Add(hash);
        _sizes.Add(size);
        _prefill.Add(prefillIndex);
    }

    public void StartGroup(string? fullHash)
    {
        _groupStarts.Add(_hashes.Count);
        _fullHashes.Add(fullHash);
    }

    public BlockStream Build(bool grouped) => new()
    {
        Hashes = [.. _hashes],
        Sizes = [.. _sizes],
        PrefillIndex = [.. _prefill],
        GroupStarts = grouped ? [.. _groupStarts, _hashes.Count] : null,
        GroupFullHashes = grouped ? [.. _fullHashes] : null,
    };
}
