namespace BlockDb.Backup.Cli;

/// <summary>
/// Runs a command and turns the errors a user can fix into one line on standard error and an exit code, without a stack
/// trace. A <see cref="System.Data.Common.DbException"/> comes from the sample's own SQL (a Duplicati database's
/// Configuration, <c>index</c>), e.g. busy while Duplicati writes.
/// </summary>
internal static class CommandRunner
{
    public static async Task<int> RunAsync(Func<Task<int>> command, CancellationToken cancellationToken)
    {
        try
        {
            return await command().ConfigureAwait(false);
        }
        catch (BlockDbConfigurationException e)
        {
            return await FailAsync($"invalid configuration: {e.Message}", ExitCodes.Configuration).ConfigureAwait(false);
        }
        catch (UsageException e)
        {
            return await FailAsync(e.Message, ExitCodes.Configuration).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return await FailAsync("cancelled.", ExitCodes.Cancelled).ConfigureAwait(false);
        }
        catch (BlockDbConflictException e)
        {
            return await FailAsync(e.Message, ExitCodes.Conflict).ConfigureAwait(false);
        }
        catch (Exception e) when (e is BlockDbException or IOException or UnauthorizedAccessException or System.Data.Common.DbException)
        {
            return await FailAsync(e.Message, ExitCodes.Failure).ConfigureAwait(false);
        }
    }

    private static async Task<int> FailAsync(string message, int exitCode)
    {
        await Console.Error.WriteLineAsync($"blockdb-backup: error: {message}").ConfigureAwait(false);
        return exitCode;
    }
}
