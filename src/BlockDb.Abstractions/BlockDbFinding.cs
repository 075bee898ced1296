namespace BlockDb;

/// <summary>One kind of problem <see cref="IBlockDatabase.CheckAsync"/> found: how many rows, and the first IDs it concerns.</summary>
/// <param name="Count">How many rows have the problem.</param>
/// <param name="FirstIds">The first IDs concerned (at most <see cref="BlockDbCheckResult.MaxListed"/>, lowest first); which table they name is said by the finding.</param>
public sealed record BlockDbFinding(long Count, IReadOnlyList<long> FirstIds)
{
    /// <summary>Nothing found.</summary>
    public static BlockDbFinding None { get; } = new(0, []);

    /// <summary>Whether any row has the problem.</summary>
    public bool Found => Count > 0;

    /// <summary>The count, and the first IDs when there are any.</summary>
    /// <returns>For example <c>2 (first: 5, 9)</c>.</returns>
    public override string ToString() => Count == 0 ? "0" : $"{Count} (first: {string.Join(", ", FirstIds)})";
}
