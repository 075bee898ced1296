namespace BlockDb.Backup.Output;

/// <summary>How progress is shown while a command runs (<c>--progress</c>).</summary>
internal enum ProgressMode
{
    /// <summary>Live on an interactive terminal, plain otherwise (redirected output, CI).</summary>
    Auto,

    /// <summary>A Spectre.Console live progress display on standard output.</summary>
    Live,

    /// <summary>A plain line on standard error every 10 seconds.</summary>
    Plain,

    /// <summary>Nothing until the final table.</summary>
    None,
}
