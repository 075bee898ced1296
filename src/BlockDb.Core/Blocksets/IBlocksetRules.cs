namespace BlockDb.Blocksets;

/// <summary>
/// A layout's own rules for blocksets, run by <see cref="BlocksetService"/>: every refusal in <see cref="Prepare"/>, before
/// anything of the blockset (or, in a one-call file, of its new blocks) is written, so a refusal leaves nothing of the
/// call; <see cref="Written"/> only writes. The Duplicati layout's full hash requirement, (FullHash, Length) find-or-add,
/// positional block sizes and blocklist hashes, and its refusal to delete a blockset a file names. One instance per
/// session, used only inside its gate, one blockset at a time.
/// </summary>
internal interface IBlocksetRules : IDisposable
{
    /// <summary>Before anything of a new blockset is written: checks it (it may read, it writes nothing), keeping what <see cref="Written"/> records.</summary>
    /// <param name="ids">The blocks' IDs, in order (the first <paramref name="count"/>); 0 or less for a block the call has yet to insert (then <paramref name="keys"/> is given).</param>
    /// <param name="keys">The blocks' hashes and sizes as matched to those IDs in this transaction, or empty (the rules read them by ID).</param>
    /// <param name="count">The number of blocks.</param>
    /// <param name="length">The blockset's length in bytes (the sum of its blocks' sizes).</param>
    /// <param name="fullHash">The full hash given, or null.</param>
    /// <exception cref="ArgumentException">The blockset breaks the layout's rules (the message says which and what is allowed).</exception>
    /// <exception cref="BlockNotFoundException">A block the layout requires with the blockset is missing.</exception>
    void Prepare(long[] ids, ReadOnlySpan<BlockKey> keys, int count, long length, string? fullHash);

    /// <summary>After the blockset's row and entries, in the same unit: writes what goes with them, as <see cref="Prepare"/> found it; refuses nothing.</summary>
    void Written(long blocksetId);

    /// <summary>Before a blockset's rows are deleted, in the same savepoint: refuses or deletes what goes with it.</summary>
    /// <exception cref="BlockDbConflictException">The layout keeps the blockset (something else names it).</exception>
    void Deleting(long blocksetId);
}
