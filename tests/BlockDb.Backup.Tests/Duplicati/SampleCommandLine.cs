using BlockDb.Backup.Cli;
using Spectre.Console;

namespace BlockDb.Backup.Tests.Duplicati;

/// <summary>Output written to the console by the sample's tables; one test at a time captures it.</summary>
[CollectionDefinition(nameof(ConsoleCapture), DisableParallelization = true)]
public sealed class ConsoleCapture;

/// <summary>Runs the sample's command line in process as a user would, capturing its tables (standard output) and its messages (standard error).</summary>
internal static class SampleCommandLine
{
    public static async Task<(int Code, string Output, string Error)> RunAsync(params string[] args)
    {
        var (commandArgs, configurationArgs) = ConfigArgs.Split(args);
        var writer = new StringWriter();
        var error = new StringWriter();
        var previous = AnsiConsole.Console;
        var previousError = Console.Error;
        AnsiConsole.Console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(writer),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        AnsiConsole.Profile.Width = 400;
        Console.SetError(error);
        try
        {
            var code = await BackupCli.Create(configurationArgs).Parse(commandArgs).InvokeAsync();
            return (code, writer.ToString(), error.ToString());
        }
        finally
        {
            AnsiConsole.Console = previous;
            Console.SetError(previousError);
        }
    }
}
