namespace BlockDb.Backup.Cli;

/// <summary>A mistake on the command line or in a file it names; printed without a stack trace, exit code 2.</summary>
internal sealed class UsageException(string message, Exception? innerException = null) : Exception(message, innerException);
