using Spectre.Console;

namespace BlockDb.Bench.Execution;

/// <summary>Where the sweep reports progress.</summary>
internal interface IProgressSink
{
    /// <summary>A message line.</summary>
    void Log(string message);

    /// <summary>A run starts.</summary>
    void Starting(string description);

    /// <summary>A run ended; one step done.</summary>
    void Finished(string line);
}

/// <summary>A Spectre.Console progress bar on an interactive terminal; plain lines otherwise (CI, pipes).</summary>
internal static class ProgressView
{
    public static bool Interactive(bool plain) =>
        !plain && !Console.IsOutputRedirected && AnsiConsole.Profile.Capabilities.Interactive;

    public static T Run<T>(int total, bool plain, Func<IProgressSink, T> body)
    {
        if (!Interactive(plain))
        {
            return body(new PlainSink(total));
        }

        return AnsiConsole.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new RemainingTimeColumn(), new SpinnerColumn())
            .Start(ctx => body(new SpectreSink(ctx.AddTask("sweep", maxValue: total))));
    }

    private sealed class PlainSink(int total) : IProgressSink
    {
        private int _done;

        public void Log(string message) => Console.WriteLine(message);

        public void Starting(string description)
        {
        }

        public void Finished(string line) => Console.WriteLine($"[{++_done}/{total}] {line}");
    }

    private sealed class SpectreSink(ProgressTask task) : IProgressSink
    {
        public void Log(string message) => AnsiConsole.MarkupLine(Markup.Escape(message));

        public void Starting(string description) => task.Description = Markup.Escape(description.Length > 60 ? description[..60] : description);

        public void Finished(string line)
        {
            if (line.Contains("FAILED", StringComparison.Ordinal) || line.Contains("INCONSISTENT", StringComparison.Ordinal))
            {
                AnsiConsole.MarkupLine("[red]" + Markup.Escape(line) + "[/]");
            }

            task.Increment(1);
        }
    }
}
