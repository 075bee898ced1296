namespace BlockDb.Drivers.Native;

/// <summary>The result and type codes the native bindings test that <see cref="SqliteResultCode"/> (the public, error-side list) does not name (<see href="https://www.sqlite.org/rescode.html"/>).</summary>
internal static class SqliteCodes
{
    public const int Ok = 0;
    public const int NoMem = 7;
    public const int Range = 25;
    public const int Row = 100;
    public const int Done = 101;

    /// <summary>The type code of SQL NULL (<c>sqlite3_column_type</c>).</summary>
    public const int NullType = 5;

    /// <summary><c>SQLITE_PREPARE_PERSISTENT</c>: the statement is kept and reused.</summary>
    public const uint PreparePersistent = 0x01;
}
