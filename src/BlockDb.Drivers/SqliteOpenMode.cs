namespace BlockDb.Drivers;

/// <summary>The open mode, as the <c>SQLITE_OPEN_*</c> flags of <see href="https://www.sqlite.org/c3ref/open.html"/>.</summary>
public enum SqliteOpenMode
{
    /// <summary><c>SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE</c>: creates the file if it does not exist.</summary>
    ReadWriteCreate = 0,

    /// <summary><c>SQLITE_OPEN_READWRITE</c>: the file must exist.</summary>
    ReadWrite = 1,

    /// <summary><c>SQLITE_OPEN_READONLY</c>: the file must exist and is never written.</summary>
    ReadOnly = 2,
}
