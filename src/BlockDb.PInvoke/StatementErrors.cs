namespace BlockDb.PInvoke;

/// <summary>The misuse errors of a prepared statement, with the result codes SQLite itself gives for them.</summary>
internal static class StatementErrors
{
    public static BlockDbException ParameterOutOfRange(string statement, int index, int parameters, string call) => new(
        $"{call} of statement '{statement}' failed: parameter index {index} is out of range; the statement has {parameters} parameter(s), numbered from 1.",
        NativeMethods.SQLITE_RANGE,
        NativeMethods.SQLITE_RANGE);

    public static BlockDbException BindWhileBusy(string statement, string call) => new(
        $"{call} of statement '{statement}' failed: the statement was stepped and not reset; call Reset before binding new values.",
        NativeMethods.SQLITE_MISUSE,
        NativeMethods.SQLITE_MISUSE);

    public static BlockDbException NotReadable(string statement, bool hasRow, int column, int columns, string call) => new(
        hasRow
            ? $"{call} of statement '{statement}' failed: column index {column} is out of range; the statement has {columns} column(s), numbered from 0."
            : $"{call} of statement '{statement}' failed: there is no current row; read columns only after Step returns true.",
        hasRow ? NativeMethods.SQLITE_RANGE : NativeMethods.SQLITE_MISUSE,
        hasRow ? NativeMethods.SQLITE_RANGE : NativeMethods.SQLITE_MISUSE);
}
