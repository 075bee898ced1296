using BlockDb.Bench.Data;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// Checks a repetition against the oracle (<see cref="ExpectedResults"/>): the digest of the returned IDs
/// (single-threaded runs), blocks created, ops and units, row counts after the run, and that the journal
/// mode read back is the one requested (a WAL left over from another run would show here).
/// </summary>
internal static class ConsistencyCheck
{
    public static void Check(RepetitionResult r, WorkloadData data, Expectation expected)
    {
        if (r.Error is not null)
        {
            return;
        }

        var spec = r.Spec;
        var ops = spec.Workload == Workload.Replay ? data.Timed.Hashes.Length : data.Timed.Units;
        if (r.Ops != ops)
        {
            r.Issues.Add($"ran {r.Ops} ops, expected {ops}");
        }

        if (spec.Threads == 1 && r.Digest != expected.Digest)
        {
            r.Issues.Add($"result digest {r.Digest:x16} differs from the expected {expected.Digest:x16} (wrong IDs or created flags)");
        }

        if (r.Created != expected.Created)
        {
            r.Issues.Add($"created {r.Created} blocks, expected {expected.Created}");
        }

        if (WorkloadInfo.SecondaryUnit(spec.Workload) is { } unit && r.Units != expected.Units)
        {
            r.Issues.Add($"{r.Units} {unit}, expected {expected.Units}");
        }

        if (r.Counts != expected.Counts)
        {
            r.Issues.Add($"counts after the run {r.Counts}, expected {expected.Counts}");
        }

        var journal = BlockDb.Sqlite.Pragmas.Resolve(PragmaSet.Get(spec.Pragma).Create()).JournalMode;
        if (journal is { } j && !r.AppliedPragmas.Contains($"journal_mode={j.ToString().ToUpperInvariant()}", StringComparison.Ordinal))
        {
            r.Issues.Add($"journal mode read back as '{r.AppliedPragmas}', requested {j}");
        }
    }

    /// <summary>Every provider must have loaded the same native SQLite version.</summary>
    public static string? CheckVersions(IEnumerable<RepetitionResult> results)
    {
        var versions = results.Where(r => r.SqliteVersion.Length > 0)
            .GroupBy(r => r.SqliteVersion)
            .Select(g => $"{g.Key} ({string.Join(", ", g.Select(r => r.Spec.Provider).Distinct())})")
            .ToList();
        return versions.Count > 1 ? $"providers loaded different SQLite versions: {string.Join("; ", versions)}" : null;
    }
}
