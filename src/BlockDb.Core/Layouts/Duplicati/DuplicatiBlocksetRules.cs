using System.Buffers;
using System.Security.Cryptography;
using BlockDb.Blocksets;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Layouts.Duplicati;

/// <summary>
/// Duplicati's rules for a blockset (its <c>AddBlocksetAsync</c>, facts §4.3 and §5, and the delete's step 5, §6.1), run
/// by <see cref="BlocksetService"/>, every refusal before the first write (<see cref="Prepare"/>):
/// a full hash of the file's <c>filehash</c> size is required; (FullHash, Length) is find-or-add; every block but the
/// last is exactly <c>blocksize</c> bytes and the last 1 to <c>blocksize</c> (Duplicati's entries take their size from
/// their position); a blockset of more than one block gets its <c>BlocklistHash</c> rows, computed from its blocks'
/// hashes (<see cref="DuplicatiBlocklists"/>) with <c>blocksize</c> and <c>blockhash</c> from <c>Configuration</c>, and
/// each blocklist block must already be a <c>Block</c> row before the call (only the caller can store its bytes, and a
/// blocklist is not a block of its own file); a blockset that a file
/// or a metadata set names is never deleted. One instance per session, used inside its gate.
/// </summary>
internal sealed class DuplicatiBlocksetRules : IBlocksetRules
{
    private readonly DuplicatiFile _file;
    private readonly ISqliteStatement _getBlock;
    private readonly ISqliteStatement _findBlock;
    private readonly ISqliteStatement _insertHash;
    private readonly ISqliteStatement _named;
    private readonly ISqliteStatement _deleteHashes;
    private readonly IncrementalHash _hash;
    private TextBlockKey[] _blocks = [];
    private int _count;

    // The blocklist hashes Prepare computed and found stored, in order, for Written to record.
    private readonly List<string> _lists = [];

    public DuplicatiBlocksetRules(ISqliteConnection connection, DuplicatiFile file)
    {
        _file = file;
        _getBlock = connection.Prepare(BlockDbSql.DuplicatiSession.GetBlock);
        _findBlock = connection.Prepare(BlockDbSql.FindBlock);
        _insertHash = connection.Prepare(BlockDbSql.DuplicatiInsertBlocklistHash);
        _named = connection.Prepare(BlockDbSql.DuplicatiBlocksetNamed);
        _deleteHashes = connection.Prepare(BlockDbSql.DuplicatiDeleteBlocklistHashes);
        _hash = IncrementalHash.CreateHash(file.BlockHash);
    }

    /// <summary>Whether <see cref="Dispose"/> ran (the session closed).</summary>
    internal bool Disposed { get; private set; }

    /// <summary>Releases the hash (a native handle); the statements go with the session's connection.</summary>
    public void Dispose()
    {
        Disposed = true;
        _hash.Dispose();
    }

    /// <exception cref="ArgumentException">No full hash, one of another size than <c>filehash</c> gives, or a block whose size is not the one its position gives.</exception>
    /// <exception cref="BlockNotFoundException">A blocklist block is not a <c>Block</c> row of its hash and size.</exception>
    public void Prepare(long[] ids, ReadOnlySpan<BlockKey> keys, int count, long length, string? fullHash)
    {
        RequireFullHash(fullHash);
        if (_blocks.Length < count)
        {
            _blocks = new TextBlockKey[Math.Max(count, _blocks.Length * 2)];
        }

        _count = count;
        for (var i = 0; i < count; i++)
        {
            // Keys matched to these IDs by (Hash, Size) in this transaction are the rows' own values: no read.
            _blocks[i] = keys.IsEmpty ? Read(ids[i], i) : new TextBlockKey(keys[i].Hash.ToString(), keys[i].Size);
            var size = _blocks[i].Size;
            var last = i == count - 1;
            if (last ? size < 1 || size > _file.Blocksize : size != _file.Blocksize)
            {
                // A block the call has yet to insert has no ID here.
                var id = ids[i] > 0 ? $" (ID {ids[i]})" : string.Empty;
                throw new ArgumentException(
                    $"Block {i} of the blockset{id} is {size:N0} bytes; in a Duplicati database every block of a file but the last is exactly the block size ({_file.Blocksize:N0} bytes, Configuration 'blocksize') and the last 1 to {_file.Blocksize:N0} bytes, because Duplicati takes an entry's size from its position (facts §4.3). Nothing of the blockset was written.",
                    "blocks");
            }
        }

        FindBlocklists();
    }

    /// <summary>Records the blocklist hashes <see cref="Prepare"/> found (it refused a blockset whose blocklist block is missing), so nothing here refuses.</summary>
    public void Written(long blocksetId)
    {
        _insertHash.BindInt64(1, blocksetId);
        for (var k = 0; k < _lists.Count; k++)
        {
            _insertHash.BindInt64(2, k);
            _insertHash.BindText(3, _lists[k]);
            _insertHash.ExecuteNonQuery();
        }
    }

    /// <summary>The prepared blockset's blocklist hashes, each found as a <c>Block</c> row of its hash and size, into <see cref="_lists"/>.</summary>
    /// <exception cref="BlockNotFoundException">A blocklist block is not a <c>Block</c> row of its hash and size.</exception>
    private void FindBlocklists()
    {
        _lists.Clear();
        var blocks = _blocks.AsSpan(0, _count);
        var lists = DuplicatiBlocklists.Count(blocks.Length, _file.Blocksize, _file.BlockHashSize);
        if (lists == 0)
        {
            return;
        }

        var bytes = ArrayPool<byte>.Shared.Rent(_file.HashesPerBlocklist * _file.BlockHashSize);
        Span<byte> digest = stackalloc byte[_file.BlockHashSize];
        try
        {
            for (var k = 0L; k < lists; k++)
            {
                var size = DuplicatiBlocklists.WriteText(blocks, k, _file.Blocksize, _file.BlockHashSize, bytes);
                _hash.AppendData(bytes, 0, size);
                _hash.GetHashAndReset(digest);
                var hash = Convert.ToBase64String(digest);
                if (!BlockExists(hash, size))
                {
                    throw new BlockNotFoundException(
                        $"Blocklist {k} of the blockset ({hash}, {size:N0} bytes: the {_file.BlockHashName} of the binary hashes of blocks {k * _file.HashesPerBlocklist} to {Math.Min(blocks.Length, (k + 1) * _file.HashesPerBlocklist) - 1}) is not a block of the database. A Duplicati blockset of more than one block names its blocklists, and each is stored as a block first (as Duplicati's splitter does before the blockset, facts §5): write its bytes (DuplicatiBlocklists.Write) to a volume and record the block (SelectXorInsertAsync), then add the blockset. Nothing of the blockset was written.",
                        (int)Math.Min(k * _file.HashesPerBlocklist, int.MaxValue));
                }

                _lists.Add(hash);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(bytes);
        }
    }

    /// <exception cref="BlockDbConflictException">A file or a metadata set names the blockset.</exception>
    public void Deleting(long blocksetId)
    {
        _named.BindInt64(1, blocksetId);
        bool file, metadata;
        try
        {
            _named.Step();
            (file, metadata) = (_named.ColumnInt64(0) != 0, _named.ColumnInt64(1) != 0);
        }
        finally
        {
            _named.Reset();
        }

        if (file || metadata)
        {
            throw new BlockDbConflictException(
                $"Blockset {blocksetId} is named by {(file ? "a file (FileLookup)" : "a metadata set (Metadataset)")} of the Duplicati database; Duplicati deletes a blockset only when no file and no metadata set names it (facts §6.1). Remove the files first (Duplicati's delete). Nothing was written.");
        }

        _deleteHashes.BindInt64(1, blocksetId);
        _deleteHashes.ExecuteNonQuery();
    }

    private void RequireFullHash(string? fullHash)
    {
        Span<byte> decoded = stackalloc byte[BlockHash.MaxBytes];
        if (fullHash is null || !Convert.TryFromBase64String(fullHash, decoded, out var written) || written != _file.FileHashSize || Convert.ToBase64String(decoded[..written]) != fullHash)
        {
            throw new ArgumentException(
                $"The Duplicati layout requires a blockset's full hash (Blockset.FullHash is NOT NULL, and Duplicati finds unchanged files by it): padded base64 of the file's {_file.FileHashName} hash ({_file.FileHashSize} bytes, Configuration 'filehash'); got {(fullHash is null ? "none" : Quoted.Value(fullHash))}. Nothing of the blockset was written.",
                nameof(fullHash));
        }
    }

    /// <summary>Block <paramref name="position"/>'s hash and size, read by ID in the blockset's transaction.</summary>
    private TextBlockKey Read(long id, int position)
    {
        _getBlock.BindInt64(1, id);
        try
        {
            return _getBlock.Step()
                ? new TextBlockKey(_getBlock.ColumnText(0) ?? string.Empty, _getBlock.ColumnInt64(1))
                : throw new BlockNotFoundException($"Block {position} of the blockset (ID {id}) is not in the index. Nothing of the blockset was written.", position);
        }
        finally
        {
            _getBlock.Reset();
        }
    }

    private bool BlockExists(string hash, long size)
    {
        _findBlock.BindText(1, hash);
        _findBlock.BindInt64(2, size);
        try
        {
            return _findBlock.Step();
        }
        finally
        {
            _findBlock.Reset();
        }
    }
}
