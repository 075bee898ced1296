namespace BlockDb;

/// <summary>
/// A write was asked of a database opened with <see cref="BlockDbOptions.ReadOnly"/>. BlockDb refuses it before
/// SQLite is reached, with SQLite's own code for the case (<c>SQLITE_READONLY</c>, 8), so callers that test the
/// code see the same value as for a read-only file. Nothing was written.
/// </summary>
public sealed class BlockDbReadOnlyException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="operation">The refused call, for example <c>SelectXorInsertAsync</c>.</param>
    /// <param name="path">The database file.</param>
    public BlockDbReadOnlyException(string operation, string path)
        : base(
            $"{operation} writes, but '{path}' was opened with BlockDb:ReadOnly = true; open it without ReadOnly to write. Nothing was written.",
            SqliteResultCode.ReadOnly,
            SqliteResultCode.ReadOnly)
    {
        Operation = operation;
    }

    /// <summary>The refused call.</summary>
    public string Operation { get; }
}
