namespace BlockDb;

/// <summary>SQLite primary result codes that BlockDb callers commonly test for (<see href="https://www.sqlite.org/rescode.html"/>).</summary>
public static class SqliteResultCode
{
    /// <summary><c>SQLITE_ERROR</c> (1): a generic error, such as SQL that does not fit the schema.</summary>
    public const int Error = 1;

    /// <summary><c>SQLITE_BUSY</c> (5): another connection holds a conflicting lock beyond <c>busy_timeout</c>.</summary>
    public const int Busy = 5;

    /// <summary><c>SQLITE_LOCKED</c> (6): a conflict inside the same connection or shared cache.</summary>
    public const int Locked = 6;

    /// <summary><c>SQLITE_READONLY</c> (8): a write to a database opened read-only or on a read-only file.</summary>
    public const int ReadOnly = 8;

    /// <summary>
    /// <c>SQLITE_READONLY_DBMOVED</c> (1032, extended): a write refused because a file of the database was deleted or
    /// renamed while the connection had it open, so committing could lose or corrupt data. SQLite gives it for the
    /// database file; BlockDb also gives it when the WAL file was deleted or replaced under a writer.
    /// </summary>
    public const int ReadOnlyDbMoved = 1032;

    /// <summary><c>SQLITE_INTERRUPT</c> (9): the operation was interrupted.</summary>
    public const int Interrupt = 9;

    /// <summary><c>SQLITE_IOERR</c> (10): the operating system reported an I/O error.</summary>
    public const int IOError = 10;

    /// <summary><c>SQLITE_CORRUPT</c> (11): the database file is malformed.</summary>
    public const int Corrupt = 11;

    /// <summary><c>SQLITE_FULL</c> (13): the disk is full.</summary>
    public const int Full = 13;

    /// <summary><c>SQLITE_CANTOPEN</c> (14): the file could not be opened (missing folder, no permission).</summary>
    public const int CantOpen = 14;

    /// <summary><c>SQLITE_CONSTRAINT</c> (19): a constraint such as the unique (hash, size) index failed.</summary>
    public const int Constraint = 19;

    /// <summary><c>SQLITE_CONSTRAINT_UNIQUE</c> (2067): a unique constraint failed (<see href="https://www.sqlite.org/rescode.html#constraint_unique"/>).</summary>
    public const int ConstraintUnique = 2067;

    /// <summary><c>SQLITE_CONSTRAINT_PRIMARYKEY</c> (1555): a primary key constraint failed.</summary>
    public const int ConstraintPrimaryKey = 1555;

    /// <summary><c>SQLITE_CONSTRAINT_TRIGGER</c> (1811): a trigger raised an error, such as a KeyMap guard refusing a block ID outside 1 to 4,294,967,295 (<see href="https://www.sqlite.org/rescode.html#constraint_trigger"/>).</summary>
    public const int ConstraintTrigger = 1811;

    /// <summary><c>SQLITE_MISUSE</c> (21): the library was used incorrectly.</summary>
    public const int Misuse = 21;

    /// <summary><c>SQLITE_NOTADB</c> (26): the file is not a SQLite database.</summary>
    public const int NotADatabase = 26;
}
