namespace BlockDb;

/// <summary>
/// A setting is invalid or cannot be honoured: an unknown provider name, a pragma value out of range, a missing file
/// path, a combination the layout does not support (raised when the options are bound or the database is built,
/// before any file is touched); or, for the <see cref="BlockLayout.KeyMap"/> layout, a key map that would pass
/// <see cref="IndexOptions.KeyMapMemoryLimitMegabytes"/> (raised by the call that needs the memory; nothing of that
/// call is written). The message names the setting, the value given and the values allowed.
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
