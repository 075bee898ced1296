using System.IO.Enumeration;
using BlockDb.Backup.Indexing;

namespace BlockDb.Backup.Walking;

/// <summary>
/// Walks a directory tree depth first, in ordinal name order (so two runs over the same tree see the files in the
/// same order), yielding regular files only. Symbolic links are neither followed nor indexed; FIFOs, sockets and
/// devices, unreadable entries and the index's own files are skipped; kernel pseudo file systems are not entered.
/// Every skip is counted in <see cref="IndexStats"/>.
/// </summary>
internal sealed class FileWalker(IndexStats stats, IReadOnlySet<string> pseudoMounts, IReadOnlySet<string> excluded)
{
    private static readonly EnumerationOptions ListOptions = new()
    {
        RecurseSubdirectories = false,
        IgnoreInaccessible = false,
        AttributesToSkip = 0,
        ReturnSpecialDirectories = false,
    };

    public IEnumerable<WalkedFile> Walk(string root, CancellationToken cancellationToken)
    {
        var pending = new Stack<string>();
        pending.Push(root);
        var subdirectories = new List<string>();
        while (pending.Count > 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var entries = List(pending.Pop());
            if (entries is null)
            {
                stats.AddUnreadable();
                continue;
            }

            subdirectories.Clear();
            foreach (var path in entries)
            {
                var (kind, size) = FileProbe.Probe(path);
                switch (kind)
                {
                    case FileKind.Regular when excluded.Contains(path):
                        stats.AddOwnFile();
                        break;
                    case FileKind.Regular:
                        stats.AddFound(size);
                        yield return new WalkedFile(path, size);
                        break;
                    case FileKind.Directory when pseudoMounts.Contains(path):
                        stats.AddPseudoDirectory();
                        break;
                    case FileKind.Directory:
                        subdirectories.Add(path);
                        break;
                    case FileKind.Symlink:
                        stats.AddSymlink();
                        break;
                    case FileKind.Special:
                        stats.AddSpecial();
                        break;
                    default:
                        stats.AddUnreadable();
                        break;
                }
            }

            for (var i = subdirectories.Count - 1; i >= 0; i--)
            {
                pending.Push(subdirectories[i]);
            }
        }
    }

    /// <summary>The full paths in <paramref name="directory"/>, sorted; <see langword="null"/> when it cannot be listed.</summary>
    private static List<string>? List(string directory)
    {
        try
        {
            var entries = new FileSystemEnumerable<string>(directory, static (ref FileSystemEntry e) => e.ToFullPath(), ListOptions).ToList();
            entries.Sort(StringComparer.Ordinal);
            return entries;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
