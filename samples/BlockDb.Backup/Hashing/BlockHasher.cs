using System.Buffers;
using System.Security.Cryptography;
using BlockDb.Backup.Walking;
using Microsoft.Win32.SafeHandles;

namespace BlockDb.Backup.Hashing;

/// <summary>
/// Cuts files into fixed-size blocks and hashes each with SHA-256, and the whole file incrementally. One instance per
/// task: it owns one pooled block buffer and one <see cref="IncrementalHash"/>, reused for every file, so a file
/// costs only its block hash strings.
/// </summary>
internal sealed class BlockHasher : IDisposable
{
    private readonly int _blockSize;
    private readonly byte[] _buffer;
    private readonly IncrementalHash _fullHash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);

    public BlockHasher(int blockSize)
    {
        _blockSize = blockSize;
        _buffer = ArrayPool<byte>.Shared.Rent(blockSize);
    }

    public HashedFile Hash(WalkedFile file, CancellationToken cancellationToken)
    {
        SafeFileHandle handle;
        try
        {
            handle = File.OpenHandle(file.Path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, FileOptions.SequentialScan);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return HashedFile.Unreadable(file.Path, e.Message);
        }

        using (handle)
        {
            var blocks = new List<BlockKey>((int)Math.Min((file.Length / _blockSize) + 1, 1 << 16));
            long offset = 0;
            try
            {
                while (true)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    var read = ReadBlock(handle, offset);
                    if (read == 0)
                    {
                        break;
                    }

                    var data = _buffer.AsSpan(0, read);
                    blocks.Add(new BlockKey(Sha256Base64.Binary(data), read));
                    _fullHash.AppendData(data);
                    offset += read;
                    if (read < _blockSize)
                    {
                        break;
                    }
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                Sha256Base64.Finish(_fullHash);
                return HashedFile.Unreadable(file.Path, e.Message);
            }
            catch
            {
                Sha256Base64.Finish(_fullHash);
                throw;
            }

            return new HashedFile(file.Path, offset, Sha256Base64.Finish(_fullHash), blocks, null);
        }
    }

    public void Dispose()
    {
        _fullHash.Dispose();
        ArrayPool<byte>.Shared.Return(_buffer);
    }

    /// <summary>Fills the buffer with up to one block from <paramref name="offset"/>; fewer bytes only at the end of the file.</summary>
    private int ReadBlock(SafeFileHandle handle, long offset)
    {
        var total = 0;
        while (total < _blockSize)
        {
            var read = RandomAccess.Read(handle, _buffer.AsSpan(total, _blockSize - total), offset + total);
            if (read == 0)
            {
                break;
            }

            total += read;
        }

        return total;
    }
}
