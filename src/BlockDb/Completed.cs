namespace BlockDb;

/// <summary>Runs synchronous work behind an async signature: failures go into the returned task.</summary>
internal static class Completed
{
    public static ValueTask Run(Action action)
    {
        try
        {
            action();
            return ValueTask.CompletedTask;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }
}
