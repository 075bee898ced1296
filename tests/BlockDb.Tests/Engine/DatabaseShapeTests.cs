using System.Reflection;
using BlockDb.Engine;

namespace BlockDb.Tests.Engine;

/// <summary>
/// The shape issue 23 asks for, which the duplicate finder cannot see: every engine's open database is a
/// <see cref="Database"/>, so opening, maintenance, import, gauges and the dispose order are written once.
/// </summary>
public sealed class DatabaseShapeTests
{
    [Fact]
    public void Every_engine_database_derives_from_the_one_database_front_end()
    {
        var databases = new[] { typeof(BlockDatabase).Assembly, Assembly.Load("BlockDb.PostgreSql") }
            .SelectMany(a => a.GetTypes())
            .Where(t => t is { IsClass: true, IsAbstract: false } && typeof(IBlockDatabase).IsAssignableFrom(t))
            .ToList();

        Assert.Equal(["PostgreSqlDatabase", "SqliteDatabase"], databases.Select(t => t.Name).Order());
        Assert.All(databases, t => Assert.True(t.IsSubclassOf(typeof(Database)), $"{t.FullName} implements IBlockDatabase on its own."));
        Assert.All(databases.Where(t => t.Name == "SqliteDatabase"), t => Assert.True(typeof(ISqliteBlockDatabase).IsAssignableFrom(t)));
        Assert.All(databases.Where(t => t.Name == "PostgreSqlDatabase"), t => Assert.False(typeof(ISqliteBlockDatabase).IsAssignableFrom(t)));
    }
}
