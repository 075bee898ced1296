namespace BlockDb;

/// <summary>
/// The file is not one this build of BlockDb can use as it is, or its content breaks what its layout needs. Raised
/// when opening: another application's SQLite database; a BlockDb schema version newer than this build reads; a
/// block layout this build does not know, or another layout than <see cref="IndexOptions.Layout"/> asks for; with
/// <see cref="BlockDbOptions.ReadOnly"/>, an empty file or one that needs a schema upgrade. Raised by the calls of a
/// <see cref="BlockLayout.KeyMap"/> database whose file holds a block ID the layout cannot hold, or whose guards were
/// changed by SQL outside BlockDb (until <see cref="IBlockDatabase.RepairAsync"/> or a reopen for writing); a Duplicati
/// local database that is half-upgraded, lacks a required index or a valid <c>Configuration</c> (<c>blocksize</c>,
/// <c>blockhash</c>, <c>filehash</c>), or holds more than one object named <c>version</c>
/// (<see cref="DuplicatiSchemaVersionException"/> for another schema version). The file is left untouched.
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
