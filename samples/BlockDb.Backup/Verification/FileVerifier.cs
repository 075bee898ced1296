using System.Buffers;
using System.Security.Cryptography;
using BlockDb.Backup.Hashing;
using BlockDb.Backup.Sidecar;

namespace BlockDb.Backup.Verification;

/// <summary>
/// Checks one file against its blockset: the blockset's Length (<c>GetBlocksetAsync</c>) and its blocks in order
/// (<c>ListBlocksetBlocksAsync</c>, the join) against the sidecar, then the file on disk re-read and re-hashed
/// block by block (hash, size, order), its total length and its full hash.
/// </summary>
internal sealed class FileVerifier(IBlockSession repository) : IDisposable
{
    private byte[] _buffer = [];

    /// <summary>Bytes and blocks re-read and matched so far.</summary>
    public long BytesVerified { get; private set; }

    public long BlocksVerified { get; private set; }

    /// <returns>What is wrong, or <see langword="null"/> when the file matches its blockset.</returns>
    public async ValueTask<string?> VerifyAsync(FileMapEntry entry, CancellationToken cancellationToken)
    {
        BlocksetInfo info;
        IReadOnlyList<BlocksetBlock> blocks;
        try
        {
            info = await repository.GetBlocksetAsync(entry.BlocksetId, cancellationToken).ConfigureAwait(false);

            // Into a buffer one longer than BlockCount: a listing that disagrees with it shows.
            var buffer = new BlocksetBlock[info.BlockCount + 1];
            var count = await repository.ListBlocksetBlocksAsync(entry.BlocksetId, 0, buffer, cancellationToken).ConfigureAwait(false);
            blocks = new ArraySegment<BlocksetBlock>(buffer, 0, count);
        }
        catch (BlocksetNotFoundException)
        {
            return $"blockset {entry.BlocksetId} is not in the database";
        }

        return CheckStructure(entry, info, blocks) ?? CheckContent(entry.Path, info, blocks, cancellationToken);
    }

    public void Dispose() => ReturnBuffer();

    private static string? CheckStructure(FileMapEntry entry, BlocksetInfo info, IReadOnlyList<BlocksetBlock> blocks)
    {
        if (info.Length != entry.Length)
        {
            return $"blockset {info.Id} has Length {info.Length}, the sidecar says {entry.Length}";
        }

        if (blocks.Count != info.BlockCount)
        {
            return $"blockset {info.Id} lists {blocks.Count} blocks, its BlockCount is {info.BlockCount}";
        }

        if (blocks.Count == 0)
        {
            // An empty file: a blockset of length 0 without blocks (the content check then reads nothing and compares the full hash).
            return info.Length == 0 ? null : $"blockset {info.Id} has no blocks but Length {info.Length}";
        }

        var blockSize = blocks[0].Block.Size;
        long sum = 0;
        for (var i = 0; i < blocks.Count; i++)
        {
            var block = blocks[i];
            if (block.Index != i)
            {
                return $"entry {i} of blockset {info.Id} has Index {block.Index}: out of order";
            }

            if (block.Block.Size > blockSize || (i < blocks.Count - 1 && block.Block.Size != blockSize))
            {
                return $"block {i} has {block.Block.Size} bytes; with fixed-size blocks of {blockSize} only the last may be shorter";
            }

            sum += block.Block.Size;
        }

        return sum == info.Length ? null : $"the blocks add up to {sum} bytes, the blockset's Length is {info.Length}";
    }

    private string? CheckContent(string path, BlocksetInfo info, IReadOnlyList<BlocksetBlock> blocks, CancellationToken cancellationToken)
    {
        try
        {
            using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, FileOptions.SequentialScan);
            using var fullHash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            long offset = 0;
            foreach (var block in blocks)
            {
                cancellationToken.ThrowIfCancellationRequested();
                var data = Read(handle, offset, (int)block.Block.Size);
                if (data.Length < block.Block.Size)
                {
                    return $"the file is shorter than indexed: it ends at byte {offset + data.Length}, block {block.Index} needs {block.Block.Size} bytes from {offset}";
                }

                if (BlockHash.Parse(Sha256Base64.Hash(data)) != block.Block.Hash)
                {
                    return $"block {block.Index} (bytes {offset} to {offset + block.Block.Size - 1}) has another hash than indexed";
                }

                fullHash.AppendData(data);
                offset += block.Block.Size;
                BlocksVerified++;
                BytesVerified += block.Block.Size;
            }

            var length = RandomAccess.GetLength(handle);
            if (length != info.Length)
            {
                return $"the file has {length} bytes, the blockset {info.Length}";
            }

            var full = Sha256Base64.Finish(fullHash);
            return info.FullHash is null || full == info.FullHash ? null : "the full-file hash differs from the blockset's FullHash";
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return $"cannot read the file: {e.Message}";
        }
    }

    private ReadOnlySpan<byte> Read(Microsoft.Win32.SafeHandles.SafeFileHandle handle, long offset, int count)
    {
        if (_buffer.Length < count)
        {
            ReturnBuffer();
            _buffer = ArrayPool<byte>.Shared.Rent(count);
        }

        var total = 0;
        while (total < count)
        {
            var read = RandomAccess.Read(handle, _buffer.AsSpan(total, count - total), offset + total);
            if (read == 0)
            {
                break;
            }

            total += read;
        }

        return _buffer.AsSpan(0, total);
    }

    private void ReturnBuffer()
    {
        if (_buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }
    }
}
