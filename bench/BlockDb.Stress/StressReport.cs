using System.Globalization;
using System.Text;

namespace BlockDb.Stress;

/// <summary>What a stress run covered and what it found wrong (nothing, when <see cref="Failures"/> is empty).</summary>
public sealed class StressReport
{
    public List<string> Failures { get; } = [];

    /// <summary>Every ID acknowledged for each block (one per acknowledgement).</summary>
    public Dictionary<BlockKey, List<long>> AckedIds { get; } = [];

    /// <summary>Every acknowledged blockset and its blocks in order.</summary>
    public Dictionary<long, BlockKey[]> AckedBlocksets { get; } = [];

    /// <summary>IDs the foreign writer inserted, updated or replaced.</summary>
    public HashSet<long> ForeignIds { get; } = [];

    /// <summary>The workers' and the foreign writer's counters, summed.</summary>
    public SortedDictionary<string, long> Counters { get; } = new(StringComparer.Ordinal);

    public int Processes { get; set; }

    public int Kills { get; set; }

    public long AckedBlockLines { get; private set; }

    public BlockDbCheckResult? Check { get; set; }

    public TimeSpan Elapsed { get; set; }

    /// <summary>What ran: the providers and the journal mode.</summary>
    public string Label { get; set; } = string.Empty;

    /// <summary>Takes in one process's output lines.</summary>
    public void Read(IEnumerable<string> lines)
    {
        foreach (var line in lines)
        {
            var parts = line.Split(' ');
            try
            {
                switch (parts[0])
                {
                    case "ACKB" when parts.Length >= 4:
                        var key = StressKeys.Parse(parts[1]);
                        if (!AckedIds.TryGetValue(key, out var ids))
                        {
                            AckedIds[key] = ids = [];
                        }

                        ids.Add(long.Parse(parts[2], CultureInfo.InvariantCulture));
                        AckedBlockLines++;
                        break;
                    case "ACKS" when parts.Length >= 3:
                        AckedBlocksets[long.Parse(parts[1], CultureInfo.InvariantCulture)] = [.. parts[2].Split(',').Select(StressKeys.Parse)];
                        break;
                    case "FOREIGN" when parts.Length >= 2:
                        ForeignIds.Add(long.Parse(parts[1], CultureInfo.InvariantCulture));
                        break;
                    case "STAT":
                        foreach (var pair in parts.Skip(1).Select(p => p.Split('=')).Where(p => p.Length == 2))
                        {
                            Counters[pair[0]] = Counters.GetValueOrDefault(pair[0]) + long.Parse(pair[1], CultureInfo.InvariantCulture);
                        }

                        break;
                    case "ERROR":
                    case "HANG":
                        Failures.Add(line);
                        break;
                }
            }
            catch (FormatException)
            {
                // The last line of a killed process may be cut short; it was never acknowledged.
            }
        }
    }

    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"stress [{Label}]: {Elapsed.TotalSeconds:F1} s, {Processes} processes started, {Kills} SIGKILLs; ");
        text.Append(CultureInfo.InvariantCulture, $"acknowledged {AckedBlockLines:N0} block results ({AckedIds.Count:N0} distinct blocks) and {AckedBlocksets.Count:N0} blocksets; ");
        text.Append(CultureInfo.InvariantCulture, $"foreign writer touched {ForeignIds.Count:N0} IDs; ");
        text.Append(string.Join(", ", Counters.Select(c => $"{c.Key} {c.Value:N0}")));
        if (Check is { } check)
        {
            text.Append(CultureInfo.InvariantCulture, $"; final file: {check.Counts.Blocks:N0} blocks, {check.Counts.Blocksets:N0} blocksets, {check.DuplicateGroups} duplicate groups, {check.MapMissing.Count} map misses, integrity {check.IntegrityCheck}");
        }

        text.Append(CultureInfo.InvariantCulture, $"; {Failures.Count} failures");
        foreach (var failure in Failures.Take(20))
        {
            text.Append("\n  ").Append(failure);
        }

        return text.ToString();
    }
}
