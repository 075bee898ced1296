using System.Buffers.Binary;
using System.Globalization;

namespace BlockDb.KeyMap;

/// <summary>
/// What a key-map snapshot file claims: the file it belongs to (<see cref="FileId"/>, <see cref="Token"/>), the key
/// seed its slots were made with, its (W, V) and the anchor row, and the table's shape.
/// </summary>
/// <param name="FileId">The database's <c>FileId</c> setting (random, written once).</param>
/// <param name="Token">The database's <c>KeyMapSnapshotToken</c> setting, committed by the writer of this snapshot just before it wrote it.</param>
/// <param name="Seed">The key seed (<see cref="KeyHasher"/>) of every slot.</param>
/// <param name="CoveredThrough">W: every row with an ID up to this has an entry, at version <paramref name="Version"/>.</param>
/// <param name="Version">V: the generation and schema version.</param>
/// <param name="AnchorId">The highest block ID at or below W when the snapshot was written (0: none).</param>
/// <param name="AnchorHash">That row's hash.</param>
/// <param name="AnchorSize">That row's size.</param>
/// <param name="Capacity">Slots in the table.</param>
/// <param name="Count">Entries (slots not 0).</param>
internal sealed record KeyMapFileHeader(
    Guid FileId,
    Guid Token,
    long Seed,
    long CoveredThrough,
    MapVersion Version,
    long AnchorId,
    byte[] AnchorHash,
    long AnchorSize,
    long Capacity,
    long Count)
{
    /// <summary>Bytes of the header; the slots follow, then a 16-byte XXH128 of everything before it.</summary>
    public const int Bytes = 256;

    /// <summary>Bytes of the checksum at the end of the file.</summary>
    public const int ChecksumBytes = 16;

    /// <summary>The format version this build reads and writes.</summary>
    public const int FormatVersion = 1;

    /// <summary>The first 8 bytes of every snapshot file.</summary>
    public static ReadOnlySpan<byte> Magic => "BlkDKMap"u8;

    /// <summary>The file's length: header, slots, checksum.</summary>
    public long FileLength => Bytes + (Capacity * KeyTable.SlotBytes) + ChecksumBytes;

    /// <summary>Writes the header's bytes (little-endian).</summary>
    public void Write(Span<byte> to)
    {
        to[..Bytes].Clear();
        Magic.CopyTo(to);
        BinaryPrimitives.WriteInt32LittleEndian(to[8..], FormatVersion);
        BinaryPrimitives.WriteInt32LittleEndian(to[12..], Bytes);
        FileId.TryWriteBytes(to[16..32]);
        Token.TryWriteBytes(to[32..48]);
        BinaryPrimitives.WriteInt64LittleEndian(to[48..], Seed);
        BinaryPrimitives.WriteInt64LittleEndian(to[56..], CoveredThrough);
        BinaryPrimitives.WriteInt64LittleEndian(to[64..], Version.Generation);
        BinaryPrimitives.WriteInt64LittleEndian(to[72..], Version.SchemaVersion);
        BinaryPrimitives.WriteInt64LittleEndian(to[80..], AnchorId);
        BinaryPrimitives.WriteInt64LittleEndian(to[88..], AnchorSize);
        to[96] = (byte)AnchorHash.Length;
        AnchorHash.CopyTo(to[97..]);
        BinaryPrimitives.WriteInt64LittleEndian(to[168..], Capacity);
        BinaryPrimitives.WriteInt64LittleEndian(to[176..], Count);
    }

    /// <summary>Reads a header, or says why the bytes are not one this build reads.</summary>
    public static KeyMapFileHeader? Read(ReadOnlySpan<byte> from, out string? problem)
    {
        problem = null;
        if (from.Length < Bytes || !from[..8].SequenceEqual(Magic))
        {
            problem = "it is not a BlockDb key-map snapshot (no magic number)";
            return null;
        }

        var format = BinaryPrimitives.ReadInt32LittleEndian(from[8..]);
        if (format != FormatVersion || BinaryPrimitives.ReadInt32LittleEndian(from[12..]) != Bytes)
        {
            problem = string.Create(CultureInfo.InvariantCulture, $"its format version is {format}; this build reads {FormatVersion}");
            return null;
        }

        var anchorLength = from[96];
        if (anchorLength > BlockHash.MaxBytes)
        {
            problem = "its anchor hash is longer than any block hash";
            return null;
        }

        return new KeyMapFileHeader(
            new Guid(from[16..32]),
            new Guid(from[32..48]),
            BinaryPrimitives.ReadInt64LittleEndian(from[48..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[56..]),
            new MapVersion(BinaryPrimitives.ReadInt64LittleEndian(from[64..]), BinaryPrimitives.ReadInt64LittleEndian(from[72..])),
            BinaryPrimitives.ReadInt64LittleEndian(from[80..]),
            from.Slice(97, anchorLength).ToArray(),
            BinaryPrimitives.ReadInt64LittleEndian(from[88..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[168..]),
            BinaryPrimitives.ReadInt64LittleEndian(from[176..]));
    }
}
