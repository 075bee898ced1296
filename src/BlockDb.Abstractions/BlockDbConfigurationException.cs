namespace BlockDb;

/// <summary>
/// The options are invalid: an unknown provider name, a pragma value out of range, a missing file path.
/// The message names the setting, the value given and the values allowed. Raised before any file is touched.
/// </summary>
public sealed class BlockDbConfigurationException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="setting">The setting's configuration path, for example <c>BlockDb:Provider</c>.</param>
    /// <param name="message">What was wrong and what is allowed.</param>
    /// <param name="innerException">The cause, if any.</param>
    public BlockDbConfigurationException(string setting, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        Setting = setting;
    }

    /// <summary>The setting at fault, as a configuration path (<c>BlockDb:Pragmas:JournalMode</c>).</summary>
    public string Setting { get; }
}
