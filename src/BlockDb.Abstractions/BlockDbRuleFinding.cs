namespace BlockDb;

/// <summary>
/// One rule of the file's layout that <see cref="IBlockDatabase.CheckAsync"/> found broken, beside BlockDb's own findings:
/// for a <see cref="BlockLayout.Duplicati"/> file, one of Duplicati's consistency rules (its
/// <c>LocalDatabase.VerifyConsistency</c>, <see href="https://github.com/duplicati/duplicati/blob/master/Duplicati/Library/Main/Database/Local/LocalDatabase.cs"/>)
/// or an invariant its code relies on without checking.
/// </summary>
/// <param name="Rule">The rule's name, for example <c>BlocklistHashCount</c> or <c>BlocklistHashValue</c>.</param>
/// <param name="Count">How many rows (or blocksets, files, volumes: the rule says) break it.</param>
/// <param name="FirstIds">The first IDs concerned (at most <see cref="BlockDbCheckResult.MaxListed"/>, lowest first), or empty when the rule names no rows (a count of all rows).</param>
/// <param name="Message">What is wrong; for Duplicati's own checks, the message Duplicati's check gives.</param>
public sealed record BlockDbRuleFinding(string Rule, long Count, IReadOnlyList<long> FirstIds, string Message)
{
    /// <summary>The rule and its message.</summary>
    /// <returns>For example <c>BlocklistHashCount: Found 1 file(s) with missing blocklist hashes</c>.</returns>
    public override string ToString() => $"{Rule}: {Message}";
}
