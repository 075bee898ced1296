using System.CommandLine;
using BlockDb.Backup.Cli;
using Spectre.Console;

namespace BlockDb.Backup;

internal static class Program
{
    public static async Task<int> Main(string[] args)
    {
        string[] commandArgs;
        string[] configurationArgs;
        try
        {
            (commandArgs, configurationArgs) = ConfigArgs.Split(args);
        }
        catch (UsageException e)
        {
            await Console.Error.WriteLineAsync($"blockdb-backup: error: {e.Message}").ConfigureAwait(false);
            return ExitCodes.Configuration;
        }

        if (Console.IsOutputRedirected)
        {
            // Tables written to a file or a pipe: plain text, wide enough that paths and digests do not wrap.
            AnsiConsole.Profile.Width = 200;
            AnsiConsole.Profile.Capabilities.Ansi = false;
            AnsiConsole.Profile.Capabilities.ColorSystem = ColorSystem.NoColors;
        }

        // Ctrl+C (SIGINT) or SIGTERM cancels the token passed to the command, which then ends its batch and prints
        // its table; System.CommandLine waits this long for it before ending the process.
        var invocation = new InvocationConfiguration { ProcessTerminationTimeout = TimeSpan.FromSeconds(30) };
        var parsed = BackupCli.Create(configurationArgs).Parse(commandArgs);
        if (parsed.Errors.Count > 0)
        {
            // Exit code 2 like other usage errors (System.CommandLine would use 1, which here means "difference found").
            foreach (var error in parsed.Errors)
            {
                await Console.Error.WriteLineAsync($"blockdb-backup: error: {error.Message}").ConfigureAwait(false);
            }

            await Console.Error.WriteLineAsync("Run 'blockdb-backup --help' or 'blockdb-backup COMMAND --help' for usage.").ConfigureAwait(false);
            return ExitCodes.Configuration;
        }

        return await parsed.InvokeAsync(invocation).ConfigureAwait(false);
    }
}
