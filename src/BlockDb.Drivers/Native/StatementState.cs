using System.Runtime.CompilerServices;

namespace BlockDb.Drivers.Native;

/// <summary>
/// The bookkeeping of one prepared statement (<see cref="NativeStatement"/>): whether it was stepped since its last
/// reset (then binding is refused, as SQLite itself would), whether a row can be read, and the misuse errors with the
/// result codes SQLite gives for them. The owner keeps it in a field and calls it around each native call.
/// </summary>
internal struct StatementState(string name, int parameters, int columns)
{
    /// <summary>Stepped since the last reset: SQLite may still read the bound values, so binding is refused.</summary>
    private bool _busy;

    /// <summary>The last step returned a row, so columns can be read.</summary>
    private bool _hasRow;

    public readonly string Name => name;

    /// <summary>Whether the statement was stepped since its last reset (a step now would not be its first).</summary>
    public readonly bool Stepped => _busy;

    /// <summary>Throws unless parameter <paramref name="index"/> (1-based) exists and the statement is reset.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly void CheckBindable(int index, string call)
    {
        if ((uint)(index - 1) >= (uint)parameters)
        {
            throw ParameterOutOfRange(index, call);
        }

        if (_busy)
        {
            throw BindWhileBusy(call);
        }
    }

    /// <summary>Throws unless a row is current and column <paramref name="column"/> (0-based) exists.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly void CheckReadable(int column, string call)
    {
        if (!_hasRow || (uint)column >= (uint)columns)
        {
            throw NotReadable(column, call);
        }
    }

    /// <summary>Call before <c>sqlite3_step</c>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void BeginStep()
    {
        _busy = true;
        _hasRow = false;
    }

    /// <summary>Records a step's result code: <see langword="true"/> for a row. Any code but a row or done is the caller's error to throw.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool EndStep(int rc) => _hasRow = rc == SqliteCodes.Row;

    /// <summary>Call after <c>sqlite3_reset</c> (or finalize).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Cleared()
    {
        _busy = false;
        _hasRow = false;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public readonly ObjectDisposedException Disposed(string type, string call) =>
        new(type, $"Statement '{name}' is disposed (or its connection is); {call} cannot run on it.");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private readonly BlockDbException ParameterOutOfRange(int index, string call) => new(
        $"{call} of statement '{name}' failed: parameter index {index} is out of range; the statement has {parameters} parameter(s), numbered from 1.",
        SqliteCodes.Range,
        SqliteCodes.Range,
        null);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private readonly BlockDbException BindWhileBusy(string call) => new(
        $"{call} of statement '{name}' failed: the statement was stepped and not reset; call Reset before binding new values.",
        SqliteResultCode.Misuse,
        SqliteResultCode.Misuse,
        null);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private readonly BlockDbException NotReadable(int column, string call) => new(
        _hasRow
            ? $"{call} of statement '{name}' failed: column index {column} is out of range; the statement has {columns} column(s), numbered from 0."
            : $"{call} of statement '{name}' failed: there is no current row; read columns only after Step returns true.",
        _hasRow ? SqliteCodes.Range : SqliteResultCode.Misuse,
        _hasRow ? SqliteCodes.Range : SqliteResultCode.Misuse,
        null);
}
