using System.CommandLine;
using System.Globalization;
using BlockDb.Bench.Model;
using BlockDb.Opening;

namespace BlockDb.Bench.Cli;

/// <summary>Parses the comma-separated (or repeated) list options.</summary>
internal static class ListParser
{
    public static IEnumerable<string> Items(IEnumerable<string> values) =>
        values.SelectMany(v => v.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));

    /// <summary>A list option: comma-separated, repeated, or both.</summary>
    public static Option<string[]> ListOption(string name, string description) => new(name)
    {
        Description = description,
        AllowMultipleArgumentsPerToken = true,
        Arity = ArgumentArity.ZeroOrMore,
    };

    /// <summary>The items of a list option, or <see langword="null"/> when it was not given.</summary>
    public static List<string>? Values(ParseResult result, Option<string[]> option) =>
        result.GetResult(option) is null ? null : [.. Items(result.GetValue(option) ?? [])];

    /// <summary>1e4, 10k, 1m, 100000.</summary>
    public static long Size(string text)
    {
        var t = text.Trim().ToLowerInvariant().Replace("_", string.Empty, StringComparison.Ordinal);
        double value;
        if (t.EndsWith('k') || t.EndsWith('m'))
        {
            value = double.Parse(t[..^1], CultureInfo.InvariantCulture) * (t[^1] == 'k' ? 1e3 : 1e6);
        }
        else if (!double.TryParse(t, NumberStyles.Float, CultureInfo.InvariantCulture, out value))
        {
            throw new ArgumentException($"'{text}' is not a size (examples: 1e4, 10k, 1m, 100000).");
        }

        return value is >= 100 and <= int.MaxValue ? (long)value : throw new ArgumentException($"Size {text} is out of range (100 to {int.MaxValue}).");
    }

    /// <summary>A batch size: a positive integer, or <c>all</c> (0) for one transaction.</summary>
    public static int Batch(string text) =>
        text.Trim().ToLowerInvariant() is "all" or "0" or "run" ? 0
        : int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var b) && b is > 0 and <= BatchingOptions.MaxCommitEvery ? b
        : throw new ArgumentException($"'{text}' is not a batch size (1 to {BatchingOptions.MaxCommitEvery:N0}, or all).");

    public static int Positive(string text, string what) =>
        int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var v) && v > 0 ? v : throw new ArgumentException($"'{text}' is not a positive {what}.");

    public static string Provider(string text)
    {
        var match = ProviderCatalog.SqliteNames.Concat(RunSpec.NativeProviders).FirstOrDefault(n => string.Equals(n, text, StringComparison.OrdinalIgnoreCase));
        return match ?? throw new ArgumentException($"Unknown provider '{text}'; valid: {string.Join(", ", ProviderCatalog.SqliteNames.Concat(RunSpec.NativeProviders))}.");
    }

    /// <summary>A ReadsPerTransaction variant: <c>default</c> (null, BlockDb's default) or 1 to 1,000,000 (1 = off).</summary>
    public static int? Reads(string text) =>
        text.Trim().ToLowerInvariant() is "default" or "null" ? null
        : int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var v) && v is >= 1 and <= 1_000_000 ? v
        : throw new ArgumentException($"'{text}' is not a ReadsPerTransaction value (default, or 1 to 1,000,000; 1 = read batching off).");

    public static TEnum Enum<TEnum>(string text, string what)
        where TEnum : struct, Enum =>
        System.Enum.TryParse<TEnum>(text.Replace("-", string.Empty, StringComparison.Ordinal), ignoreCase: true, out var v) && System.Enum.IsDefined(v)
            ? v
            : throw new ArgumentException($"Unknown {what} '{text}'; valid: {string.Join(", ", System.Enum.GetNames<TEnum>()).ToLowerInvariant()}.");
}
