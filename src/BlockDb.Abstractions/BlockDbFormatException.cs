namespace BlockDb;

/// <summary>
/// The file is a SQLite database but not one this build of BlockDb can use: another application's database,
/// or a BlockDb schema version newer than <see cref="Drivers.BlockDbSql.SchemaVersion"/>. The file is left untouched.
/// </summary>
public sealed class BlockDbFormatException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What was found and what this build accepts.</param>
    public BlockDbFormatException(string message)
        : base(message)
    {
    }
}
