using Microsoft.Extensions.Logging;

namespace BlockDb;

/// <summary>Opens a block index in one call: <c>new BlockDatabaseBuilder(options).UseLoggerFactory(loggerFactory).Build()</c>; the builder offers the other choices.</summary>
public static class BlockDatabase
{
    /// <summary>
    /// Opens a block index with the provider named in <paramref name="options"/>: validates a frozen copy of the
    /// options, opens the file, creates or checks the schema (<c>PRAGMA user_version</c>), applies and verifies the
    /// pragmas. Opening an existing file never takes the write lock, so a reader can open beside a writer that holds
    /// an open batch.
    /// </summary>
    /// <param name="options">The options; copied, so changing them afterwards changes nothing.</param>
    /// <param name="loggerFactory">Where the applied pragmas and warnings are logged; none when <see langword="null"/>.</param>
    /// <returns>The open database, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="BlockDbConfigurationException">An option is invalid or names an unknown or missing provider.</exception>
    /// <exception cref="BlockDbFormatException">The file belongs to another application or a newer BlockDb, has another layout than <see cref="IndexOptions.Layout"/> asks for, or (<see cref="BlockDbOptions.ReadOnly"/>) is empty or needs a schema upgrade.</exception>
    /// <exception cref="BlockDbException">The file could not be opened or configured (see <see cref="BlockDatabaseBuilder.Build"/>).</exception>
    public static IBlockDatabase Open(BlockDbOptions options, ILoggerFactory? loggerFactory = null) =>
        new BlockDatabaseBuilder(options).UseLoggerFactory(loggerFactory).Build();

}
