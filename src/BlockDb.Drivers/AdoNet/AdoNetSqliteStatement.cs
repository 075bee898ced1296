using System.Data.Common;

namespace BlockDb.Drivers.AdoNet;

/// <summary>
/// A prepared statement on an ADO.NET provider: one reused <see cref="DbCommand"/> whose parameter objects are
/// created once. Binding boxes integers into <see cref="DbParameter.Value"/> and every execution opens a
/// <see cref="DbDataReader"/>: that is the allocation the ADO.NET API forces.
/// </summary>
internal sealed class AdoNetSqliteStatement : ISqliteStatement
{
    private readonly AdoNetSqliteConnection _owner;
    private readonly DbCommand _command;
    private readonly DbParameter[] _parameters;
    private DbDataReader? _reader;
    private byte[]? _blobScratch;
    private bool _disposed;

    public AdoNetSqliteStatement(AdoNetSqliteConnection owner, SqlStatement statement, DbCommand command, DbParameter[] parameters)
    {
        _owner = owner;
        Statement = statement;
        _command = command;
        _parameters = parameters;
    }

    public SqlStatement Statement { get; }

    public void BindInt64(int index, long value) => Parameter(index).Value = value;

    public void BindDouble(int index, double value) => Parameter(index).Value = value;

    public void BindText(int index, string value) => Parameter(index).Value = value;

    public void BindNull(int index) => Parameter(index).Value = DBNull.Value;

    public void BindBlob(int index, ReadOnlySpan<byte> value)
    {
        // ADO.NET takes a byte[]; the parameter's array is reused while the length stays the same (hashes
        // always have one length), as the providers copy it into SQLite when the command runs.
        var parameter = Parameter(index);
        var buffer = parameter.Value as byte[];
        if (buffer is null || buffer.Length != value.Length)
        {
            buffer = new byte[value.Length];
        }

        value.CopyTo(buffer);
        parameter.Value = buffer;
    }

    public bool Step()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        try
        {
            _reader ??= _command.ExecuteReader();
            return _reader.Read();
        }
        catch (Exception e) when (_owner.Translate(e, Statement.Name) is { } translated)
        {
            Reset();
            _owner.ResetAfterFailure(_command);
            throw translated;
        }
    }

    public long ColumnInt64(int column) => Reader.GetInt64(column);

    public double ColumnDouble(int column) => Reader.GetDouble(column);

    public int ColumnBlob(int column, Span<byte> destination)
    {
        var reader = Reader;
        if (reader.IsDBNull(column))
        {
            return -1;
        }

        return _owner.ReadBlob(reader, column, destination, ref _blobScratch);
    }

    public bool ColumnIsNull(int column) => Reader.IsDBNull(column);

    public string? ColumnText(int column) => Reader.IsDBNull(column) ? null : Reader.GetString(column);

    public int ExecuteNonQuery()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        Reset();
        try
        {
            return _command.ExecuteNonQuery();
        }
        catch (Exception e) when (_owner.Translate(e, Statement.Name) is { } translated)
        {
            _owner.ResetAfterFailure(_command);
            throw translated;
        }
    }

    public void Reset()
    {
        var reader = _reader;
        _reader = null;
        if (reader is null)
        {
            return;
        }

        try
        {
            reader.Dispose();
        }
        catch (Exception e) when (_owner.Translate(e, Statement.Name) is { } translated)
        {
            throw translated;
        }
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        _reader?.Dispose();
        _reader = null;
        _command.Dispose();
    }

    private DbDataReader Reader => _reader ?? throw new InvalidOperationException($"{Statement.Name}: no current row; call Step first and read columns only while it returns true.");

    private DbParameter Parameter(int index)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if ((uint)(index - 1) >= (uint)_parameters.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(index), index, $"{Statement.Name} has parameters 1 to {_parameters.Length}.");
        }

        return _parameters[index - 1];
    }
}
