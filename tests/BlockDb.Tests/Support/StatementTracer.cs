using Microsoft.Data.Sqlite;
using SQLitePCL;

namespace BlockDb.Tests.Support;

/// <summary>
/// Records the statements a Microsoft.Data.Sqlite connection runs while <see cref="On"/> is set (SQLite's legacy
/// <c>sqlite3_trace</c>: one line per statement run, BlockDb's through a borrowed connection included); disposing it
/// removes the hook.
/// </summary>
internal sealed class StatementTracer : IDisposable
{
    private readonly SqliteConnection _connection;

    public StatementTracer(SqliteConnection connection, bool on = false)
    {
        _connection = connection;
        On = on;
        raw.sqlite3_trace(connection.Handle!, (_, sql) =>
        {
            if (On)
            {
                Statements.Add(sql.Trim());
            }
        }, null);
    }

    /// <summary>Whether statements are recorded now.</summary>
    public bool On { get; set; }

    /// <summary>The statements recorded, in order.</summary>
    public List<string> Statements { get; } = [];

    public void Dispose()
    {
        if (_connection.Handle is { } handle)
        {
            raw.sqlite3_trace(handle, (strdelegate_trace?)null, null);
        }
    }
}
