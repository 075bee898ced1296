namespace BlockDb;

/// <summary>
/// The file is not one this build can use as it is, and is left untouched: another application's SQLite database, a
/// newer BlockDb schema, an unknown layout or another than <see cref="IndexOptions.Layout"/> asks for, an empty or
/// outdated file opened <see cref="BlockDbOptions.ReadOnly"/>, a Duplicati database that is half-upgraded or lacks a
/// required index or <c>Configuration</c> key (<see cref="DuplicatiSchemaVersionException"/>: another version). Also
/// raised by the calls of a KeyMap database holding an ID out of range or guards changed outside BlockDb, until
/// <see cref="IBlockDatabase.RepairAsync"/> or a reopen.
/// </summary>
public class BlockDbFormatException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="message">What was found and what this build accepts.</param>
    public BlockDbFormatException(string message)
        : base(message)
    {
    }
}
