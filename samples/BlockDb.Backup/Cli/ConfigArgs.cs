namespace BlockDb.Backup.Cli;

/// <summary>
/// Separates configuration keys given on the command line (<c>--BlockDb:Pragmas:JournalMode=Wal</c> or
/// <c>--BlockDb:Pragmas:JournalMode Wal</c>, and the sample's own <c>--Backup:DataFolder=…</c>) from the arguments
/// System.CommandLine parses.
/// </summary>
internal static class ConfigArgs
{
    private static readonly string[] Prefixes = ["--" + BlockDbOptions.SectionName + ":", "--" + AppConfiguration.SectionName + ":"];

    /// <summary>Splits <paramref name="args"/>.</summary>
    /// <returns>The arguments for System.CommandLine, and the configuration keys as <c>--key=value</c>.</returns>
    public static (string[] Command, string[] Configuration) Split(IReadOnlyList<string> args)
    {
        var command = new List<string>(args.Count);
        var configuration = new List<string>();
        for (var i = 0; i < args.Count; i++)
        {
            var arg = args[i];
            if (arg == "--")
            {
                command.AddRange(args.Skip(i));
                break;
            }

            if (!Prefixes.Any(p => arg.StartsWith(p, StringComparison.OrdinalIgnoreCase)))
            {
                command.Add(arg);
                continue;
            }

            if (arg.Contains('=', StringComparison.Ordinal))
            {
                configuration.Add(arg);
            }
            else if (i + 1 < args.Count && !args[i + 1].StartsWith("--", StringComparison.Ordinal))
            {
                configuration.Add($"{arg}={args[++i]}");
            }
            else
            {
                throw new UsageException($"The configuration key {arg} has no value; write {arg}=VALUE.");
            }
        }

        return ([.. command], [.. configuration]);
    }
}
