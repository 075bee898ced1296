using System.Diagnostics;
using System.Globalization;
using Spectre.Console;

namespace BlockDb.Backup.Output;

/// <summary>
/// Shows a status line while <c>work</c> runs: a Spectre.Console live display on an interactive terminal, or plain
/// periodic lines on standard error when output is redirected or the environment is not interactive (CI), so it
/// never waits for a terminal nor writes cursor movements into a log.
/// </summary>
internal static class ProgressDisplay
{
    private static readonly TimeSpan LiveInterval = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan PlainInterval = TimeSpan.FromSeconds(10);

    public static ProgressMode Resolve(ProgressMode mode) => mode switch
    {
        ProgressMode.Auto when IsInteractive() => ProgressMode.Live,
        ProgressMode.Auto => ProgressMode.Plain,
        _ => mode,
    };

    /// <summary>Waits for <paramref name="work"/>, showing <paramref name="status"/> meanwhile; rethrows its exception.</summary>
    public static async Task RunAsync(ProgressMode mode, string title, Func<string> status, Task work)
    {
        switch (Resolve(mode))
        {
            case ProgressMode.Live:
                await AnsiConsole.Progress()
                    .AutoClear(true)
                    .HideCompleted(true)
                    .Columns(new SpinnerColumn(), new ElapsedTimeColumn(), new TaskDescriptionColumn { Alignment = Justify.Left })
                    .StartAsync(async context =>
                    {
                        var task = context.AddTask(Markup.Escape(title)).IsIndeterminate();
                        while (!work.IsCompleted)
                        {
                            task.Description = Markup.Escape($"{title}: {status()}");
                            await Task.WhenAny(work, Task.Delay(LiveInterval)).ConfigureAwait(false);
                        }

                        task.StopTask();
                    }).ConfigureAwait(false);
                break;
            case ProgressMode.Plain:
                var clock = Stopwatch.StartNew();
                while (await Task.WhenAny(work, Task.Delay(PlainInterval)).ConfigureAwait(false) != work)
                {
                    await Console.Error.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"[{clock.Elapsed:hh\\:mm\\:ss}] {title}: {status()}")).ConfigureAwait(false);
                }

                break;
        }

        await work.ConfigureAwait(false);
    }

    private static bool IsInteractive() =>
        !Console.IsOutputRedirected
        && AnsiConsole.Profile.Capabilities.Interactive
        && AnsiConsole.Profile.Capabilities.Ansi;
}
