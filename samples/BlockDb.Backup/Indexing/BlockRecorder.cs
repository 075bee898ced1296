using System.Globalization;
using System.Text;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// Writes the block stream for the benchmark harness to replay (<c>--record FILE</c>): header
/// <c>file_index	block_index	hash	size</c>, then one line per block in the order they were recorded;
/// <c>file_index</c> counts the files that got a blockset, from 0.
/// </summary>
internal sealed class BlockRecorder : IAsyncDisposable
{
    public const string Header = "file_index\tblock_index\thash\tsize";
    private readonly StreamWriter _writer;
    private readonly char[] _line = new char[BlockHash.MaxLength + 128];

    public BlockRecorder(string path)
    {
        _writer = new StreamWriter(path, append: false, new UTF8Encoding(false), bufferSize: 1 << 16) { NewLine = "\n" };
        _writer.WriteLine(Header);
    }

    public void Write(long fileIndex, IReadOnlyList<BlockKey> blocks)
    {
        for (var i = 0; i < blocks.Count; i++)
        {
            var block = blocks[i];
            if (!_line.AsSpan().TryWrite(CultureInfo.InvariantCulture, $"{fileIndex}\t{i}\t{block.Hash}\t{block.Size}\n", out var written))
            {
                throw new InvalidOperationException("A record line did not fit its buffer.");
            }

            _writer.Write(_line, 0, written);
        }
    }

    public ValueTask DisposeAsync() => _writer.DisposeAsync();
}
