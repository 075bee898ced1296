using System.Runtime.InteropServices;
using BlockDb.Drivers;
using BlockDb.PInvoke;

namespace BlockDb.Tests.Providers;

/// <summary>
/// The PInvoke provider opens its connections in SQLite's multi-thread mode (<c>SQLITE_OPEN_NOMUTEX</c>): no connection
/// mutex is taken and released around each native call, because BlockDb lets one party at a time use a connection [G1]
/// (see <see href="https://www.sqlite.org/threadsafe.html"/>). The races on the gate are proved in the Sessions tests.
/// </summary>
public sealed class ConnectionThreadingModeTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [InlineData(SqliteOpenMode.ReadWriteCreate)]
    [InlineData(SqliteOpenMode.ReadOnly)]
    public void A_PInvoke_connection_has_no_connection_mutex(SqliteOpenMode mode)
    {
        var path = _folder.File("threading.db");
        using (var create = PInvokeConnection.Open(new SqliteOpenOptions(path, SqliteOpenMode.ReadWriteCreate)))
        {
            create.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
        }

        using var connection = PInvokeConnection.Open(new SqliteOpenOptions(path, mode));

        // sqlite3_db_mutex is NULL exactly when the connection was opened in multi-thread (or single-thread) mode.
        Assert.Equal(0, sqlite3_db_mutex(connection.Db));
        Assert.Equal("0", connection.QueryText("SELECT count(*) FROM \"Item\""));
    }

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern nint sqlite3_db_mutex(nint db);
}
