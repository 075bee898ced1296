using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace BlockDb;

/// <summary>
/// A block's identity, the one way to name a block: its hash as bytes and its size in bytes. <see cref="Parse"/> reads
/// the hash from Duplicati's text form (padded standard base64). <c>default(BlockKey)</c> names no block: every call
/// refuses it with an <see cref="ArgumentException"/>.
/// </summary>
public readonly struct BlockKey : IEquatable<BlockKey>
{
    private readonly BlockHash _hash;
    private readonly long _size;

    /// <summary>A block's key from its hash and size.</summary>
    /// <param name="hash">The block hash (1 to <see cref="BlockHash.MaxBytes"/> bytes).</param>
    /// <param name="size">The block size in bytes, 1 or more.</param>
    /// <exception cref="ArgumentException">The hash is empty (<c>default(BlockHash)</c>).</exception>
    /// <exception cref="ArgumentOutOfRangeException">The size is below 1.</exception>
    public BlockKey(BlockHash hash, long size)
    {
        BlockHash.Validate(hash, nameof(hash));
        BlockHash.ValidateSize(size, nameof(size));
        _hash = hash;
        _size = size;
    }

    /// <summary>The block hash (empty only in <c>default(BlockKey)</c>).</summary>
    public BlockHash Hash => _hash;

    /// <summary>The block size in bytes (1 or more; 0 only in <c>default(BlockKey)</c>).</summary>
    public long Size => _size;

    /// <summary>The hash's bytes, read in place: <see cref="Hash"/> returns a copy of the hash (up to 66 bytes), which a hot lookup would pay on every call.</summary>
    [UnscopedRef]
    internal ReadOnlySpan<byte> HashBytes
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _hash.Bytes;
    }

    /// <summary>A block's key from Duplicati's text form of its hash (canonical standard base64 with <c>=</c> padding, 44 characters for SHA-256) and its size.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="base64Hash"/> is null.</exception>
    /// <exception cref="ArgumentException">The hash is not canonical padded base64 of 1 to <see cref="BlockHash.MaxBytes"/> bytes.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The size is below 1.</exception>
    public static BlockKey Parse(string base64Hash, long size)
    {
        if (!BlockHash.TryParse(base64Hash, out var hash))
        {
            BlockHash.Validate(base64Hash, nameof(base64Hash));
        }

        BlockHash.ValidateSize(size, nameof(size));
        return new BlockKey(hash, size, checkedAlready: true);
    }

    /// <summary>As <see cref="Parse"/>, without throwing: false (and <c>default</c>) for an invalid hash or a size below 1.</summary>
    public static bool TryParse([NotNullWhen(true)] string? base64Hash, long size, out BlockKey key)
    {
        key = size >= 1 && BlockHash.TryParse(base64Hash, out var hash) ? new BlockKey(hash, size, checkedAlready: true) : default;
        return key._size != 0;
    }

    /// <summary>The key as <c>"&lt;padded base64 hash&gt;:&lt;size&gt;"</c>; <c>":0"</c> for <c>default(BlockKey)</c>.</summary>
    public override string ToString() => $"{_hash}:{_size}";

    /// <inheritdoc />
    public bool Equals(BlockKey other) => _size == other._size && _hash.Equals(other._hash);

    /// <inheritdoc />
    public override bool Equals(object? obj) => obj is BlockKey other && Equals(other);

    /// <inheritdoc />
    public override int GetHashCode() => HashCode.Combine(_hash, _size);

    /// <summary>Whether two keys name the same block (same hash bytes and size).</summary>
    public static bool operator ==(BlockKey left, BlockKey right) => left.Equals(right);

    /// <summary>Whether two keys name different blocks.</summary>
    public static bool operator !=(BlockKey left, BlockKey right) => !left.Equals(right);

    /// <summary>A key read back from a stored row: the index holds only blocks of 1 byte or more with a hash.</summary>
    /// <exception cref="BlockDbFormatException">The row's hash is empty or its size below 1 (a damaged or foreign row; <c>CheckAsync</c> reports it).</exception>
    internal static BlockKey Stored(in BlockHash hash, long size) =>
        size >= 1 && !hash.IsEmpty
            ? new BlockKey(hash, size, checkedAlready: true)
            : throw new BlockDbFormatException($"A stored block has {(hash.IsEmpty ? "an empty hash" : $"a size of {size}")}; every block has a hash and 1 byte or more. Run CheckAsync.");

    private BlockKey(in BlockHash hash, long size, bool checkedAlready)
    {
        _ = checkedAlready;
        _hash = hash;
        _size = size;
    }
}
