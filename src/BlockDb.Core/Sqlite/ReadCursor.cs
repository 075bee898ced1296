using System.Diagnostics;
using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Sql;

namespace BlockDb.Sqlite;

/// <summary>
/// A query streamed from one read snapshot on a connection of its own (an enumeration of <see cref="IBlockDatabase"/>).
/// Each enumerator opens its connection, begins a read transaction and steps the statement row by row as the caller
/// asks; the first row fixes the snapshot.
/// </summary>
internal sealed class ReadCursor<T>(SqliteDatabase database, SqlStatement query, Action<ISqliteStatement>? bind, Func<ISqliteStatement, T> read, CancellationToken cancellationToken)
    : IAsyncEnumerable<T>
{
    public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken1 = default) =>
        new Cursor(database, query, bind, read, cancellationToken, cancellationToken1);

    /// <summary>
    /// One enumeration. Invariant: the statement is stepped only inside the cursor's gate, and once the gate is closed
    /// (by the caller's dispose, or by the database's) the connection is closed and every later call fails with
    /// <see cref="ObjectDisposedException"/>; the database disposes every cursor still open, waiting for a step in flight.
    /// </summary>
    private sealed class Cursor : IAsyncEnumerator<T>, IReadCursor
    {
        private readonly SqliteDatabase _database;
        private readonly Func<ISqliteStatement, T> _read;
        private readonly CancellationToken _first;
        private readonly CancellationToken _second;
        private readonly CallGate _gate = new();
        private readonly ISqliteConnection _connection;
        private readonly ISqliteStatement _statement;

        public Cursor(SqliteDatabase database, SqlStatement query, Action<ISqliteStatement>? bind, Func<ISqliteStatement, T> read, CancellationToken first, CancellationToken second)
        {
            first.ThrowIfCancellationRequested();
            second.ThrowIfCancellationRequested();
            (_database, _read, _first, _second) = (database, read, first, second);
            database.RequireCallerTransaction();
            _connection = database.OpenReadConnection();
            try
            {
                if (!database.External)
                {
                    // On a caller's connection the query reads in the caller's transaction [X1].
                    _connection.Execute(BlockDbSql.BeginRead);
                }

                _statement = _connection.Prepare(query);
                bind?.Invoke(_statement);
            }
            catch
            {
                _connection.Dispose();
                throw;
            }

            database.Register(this);
        }

        public T Current { get; private set; } = default!;

        public ValueTask<bool> MoveNextAsync()
        {
            try
            {
                if (!_gate.TryEnter(this, _first.IsCancellationRequested ? _first : _second))
                {
                    throw new UnreachableException("A cursor's gate has no background work.");
                }

                try
                {
                    if (!_statement.Step())
                    {
                        Current = default!;
                        return new(false);
                    }

                    Current = _read(_statement);
                    return new(true);
                }
                finally
                {
                    _gate.Exit();
                }
            }
            catch (Exception e)
            {
                return ValueTask.FromException<bool>(e);
            }
        }

        public ValueTask DisposeAsync() => _gate.CloseAsync(Close);

        public void Dispose() => _gate.Close(Close);

        private void Close()
        {
            try
            {
                _connection.Dispose();
            }
            finally
            {
                _database.Unregister(this);
            }
        }
    }
}
