using System.Data.Common;
using System.Data.SQLite;
using BlockDb.Opening;

namespace BlockDb.Tests.Providers;

/// <summary>
/// SQLite works synchronously, and BlockDb's SQLite calls complete before they return on every provider. The ADO.NET
/// drivers call the providers' synchronous methods: System.Data.SQLite (like Microsoft.Data.Sqlite) implements no
/// <c>*Async</c> method of its own, so ADO.NET's defaults would run the same work synchronously anyway, with a task
/// around it; if a later version implements them, this says so.
/// </summary>
public sealed class AsyncCallTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static TheoryData<string> SqliteProviders() => [.. ProviderCatalog.SqliteNames];

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(SqliteProviders))]
    public async Task A_sqlite_call_has_completed_when_it_returns_on_every_provider(string provider)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = _folder.File(provider + ".db") });
        await using var session = await db.OpenSessionAsync();
        var insert = session.SelectXorInsertAsync(TestData.Block(1, 10));
        Assert.True(insert.IsCompletedSuccessfully);
        var find = session.FindBlockAsync(TestData.Block(1, 10));
        Assert.True(find.IsCompletedSuccessfully);
        Assert.Equal((await insert).Id, await find);
    }

    [Fact]
    public void System_data_sqlite_keeps_adonets_synchronous_async_methods()
    {
        Assert.Equal(typeof(DbCommand), Declaring(typeof(SQLiteCommand), "ExecuteDbDataReaderAsync", typeof(System.Data.CommandBehavior), typeof(CancellationToken)));
        Assert.Equal(typeof(DbCommand), Declaring(typeof(SQLiteCommand), "ExecuteNonQueryAsync", typeof(CancellationToken)));
        Assert.Equal(typeof(DbCommand), Declaring(typeof(SQLiteCommand), "ExecuteScalarAsync", typeof(CancellationToken)));
        Assert.Equal(typeof(DbDataReader), Declaring(typeof(SQLiteDataReader), "ReadAsync", typeof(CancellationToken)));
        Assert.Equal(typeof(DbConnection), Declaring(typeof(SQLiteConnection), "OpenAsync", typeof(CancellationToken)));
    }

    private static Type? Declaring(Type type, string method, params Type[] parameters) =>
        type.GetMethod(method, System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance, parameters)?.DeclaringType;
}
