namespace BlockDb.Stress;

/// <summary>Lines to the orchestrator, one writer at a time, flushed at once so a SIGKILL loses nothing already printed.</summary>
internal static class Output
{
    private static readonly Lock Gate = new();

    public static void Line(string line)
    {
        lock (Gate)
        {
            Console.Out.WriteLine(line);
            Console.Out.Flush();
        }
    }
}
