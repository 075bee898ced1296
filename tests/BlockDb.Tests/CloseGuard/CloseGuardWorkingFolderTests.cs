using BlockDb.Drivers;
using BlockDb.Opening;

namespace BlockDb.Tests.CloseGuard;

/// <summary>Changes the working folder, so it runs alone.</summary>
[CollectionDefinition(nameof(CloseGuardWorkingFolderTests), DisableParallelization = true)]
[Collection(nameof(CloseGuardWorkingFolderTests))]
public sealed class CloseGuardWorkingFolderTests : IDisposable
{
    private readonly TempFolder _first = new();
    private readonly TempFolder _second = new();

    public void Dispose()
    {
        _first.Dispose();
        _second.Dispose();
    }

    [Theory]
    [MemberData(nameof(CloseGuardWaitAndLeakTests.Providers), MemberType = typeof(CloseGuardWaitAndLeakTests))]
    public void The_sentinel_locks_the_file_the_connections_opened_after_the_working_folder_changed(string provider)
    {
        // Connections opened with a relative path; the working folder then changes (to one holding a file of the same
        // name). The sentinel was opened with the closing connection's relative path, so it locked the other file:
        // the close of the first file was not deferred, and the sentinel kept a descriptor of a file nobody opened.
        var driver = ProviderCatalog.SqliteDriver(provider);
        var saved = Environment.CurrentDirectory;
        try
        {
            foreach (var folder in new[] { _first.Path, _second.Path })
            {
                using var setup = driver.Open(new SqliteOpenOptions(Path.Combine(folder, "relative.db"), SqliteOpenMode.ReadWriteCreate));
                setup.Execute("CREATE TABLE \"Item\" (\"ID\" INTEGER PRIMARY KEY)");
            }

            Environment.CurrentDirectory = _first.Path;
            var kept = driver.Open(new SqliteOpenOptions("relative.db", SqliteOpenMode.ReadWrite, 1000));
            var closing = driver.Open(new SqliteOpenOptions("relative.db", SqliteOpenMode.ReadWrite, 1000));
            closing.QueryText("SELECT COUNT(*) FROM \"Item\"");
            Environment.CurrentDirectory = _second.Path;
            closing.Dispose();

            Assert.Equal(0, ProcessFiles.Descriptors(Path.Combine(_second.Path, "relative.db")));
            kept.Dispose();
            Assert.Equal(0, ProcessFiles.Descriptors(Path.Combine(_first.Path, "relative.db")));
        }
        finally
        {
            Environment.CurrentDirectory = saved;
        }
    }
}
