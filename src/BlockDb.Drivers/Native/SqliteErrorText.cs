namespace BlockDb.Drivers.Native;

/// <summary>
/// How every native binding turns a SQLite result code into a <see cref="BlockDbException"/>: the primary code, the
/// extended one when the connection knows it, and one message format. The binding supplies SQLite's own texts
/// (<c>sqlite3_errmsg</c>, <c>sqlite3_errstr</c>).
/// </summary>
internal static class SqliteErrorText
{
    /// <summary>The extended code for a call that returned <paramref name="rc"/>: <paramref name="rc"/> itself when it is already extended, else the connection's <paramref name="known"/> extended code when it extends the same primary code, else <paramref name="rc"/>.</summary>
    public static int Extended(int rc, int known) =>
        rc > 0xFF ? rc : (known & 0xFF) == (rc & 0xFF) ? known : rc;

    /// <summary>The failure of <paramref name="context"/> with SQLite's <paramref name="message"/> (or the code's own text when there is none).</summary>
    /// <param name="rc">The code the call returned.</param>
    /// <param name="extended">The extended code (<see cref="Extended"/>).</param>
    /// <param name="context">What failed, on what.</param>
    /// <param name="message">SQLite's message, if any.</param>
    /// <param name="describe">SQLite's English text for a code (<c>sqlite3_errstr</c>).</param>
    public static BlockDbException Create(int rc, int extended, string context, string? message, Func<int, string?> describe)
    {
        var primary = rc & 0xFF;
        if (string.IsNullOrEmpty(message))
        {
            message = describe(rc) ?? "unknown error";
        }

        return new BlockDbException(
            $"{context}: {message} (SQLite error {primary} '{describe(primary) ?? "unknown error"}', extended code {extended}).",
            primary,
            extended,
            null);
    }
}
