namespace BlockDb.Tests.ErrorMessages;

/// <summary>The huge value the error-message tests give, and what they expect of a message quoting it.</summary>
internal static class HugeInput
{
    /// <summary>A message quoting one value is at most this long (the formatter shows 96 characters of it).</summary>
    public const int MaxMessage = 1_000;

    /// <summary>10 MiB characters: a hash, a name or a setting no one would give on purpose.</summary>
    public static readonly string Huge = new('A', 10 << 20);

    /// <summary>Asserts a short message that still shows the start and the end of the value (in any case: Npgsql lowers a keyword).</summary>
    public static void AssertShort(Exception e, int max = MaxMessage)
    {
        Assert.True(e.Message.Length <= max, $"{e.GetType().Name} message of {e.Message.Length:N0} characters: {e.Message[..Math.Min(300, e.Message.Length)]}");
        Assert.Contains("AAAA…AAAA", e.Message, StringComparison.OrdinalIgnoreCase);
    }
}
