using System.Diagnostics;
using BlockDb.Conversion;
using BlockDb.Diagnostics;
using BlockDb.Layouts;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb;

/// <summary>
/// Converts a BlockDb file from one block layout to another (a Duplicati-style <see cref="BlockLayout.TextHash"/> file
/// to <see cref="BlockLayout.KeyMap"/>, say), as a copy into a new file: every volume, block, blockset and entry keeps
/// its ID, and the backup engine's own tables in the file (with their indexes, views and triggers) are carried into the
/// new file unchanged, so the rows that name blocks and blocksets stay valid. SQLite providers only.
/// </summary>
public static class BlockDbConverter
{
    /// <summary>
    /// Copies the index <paramref name="source"/> opens into the new file <paramref name="target"/> names, with the
    /// layout it sets (<see cref="IndexOptions.Layout"/>, the default when unset), then checks the new file. The source
    /// is read from one snapshot and is not changed (an older source file is upgraded in place when it is opened for
    /// writing, as any open does; open it with <see cref="BlockDbOptions.ReadOnly"/> to forbid that). Every schema object
    /// BlockDb does not own is carried with its own SQL text: tables with every row at its rowid (and their
    /// <c>AUTOINCREMENT</c> counters), then their indexes, views and triggers (<see cref="ConversionResult.CarriedObjects"/>);
    /// <c>ANALYZE</c> statistics are not. When the copy fails or is cancelled, the new file is deleted: nothing
    /// half-written is left.
    /// </summary>
    /// <param name="source">The options that open the source index (any SQLite provider).</param>
    /// <param name="target">The options of the new file: its path must not exist; its provider and layout are used.</param>
    /// <param name="options">How to copy; <see langword="null"/>: the defaults (duplicates refused).</param>
    /// <param name="progress">Told after each transaction of the new file which table is copied and how far.</param>
    /// <param name="loggerFactory">Where the two databases log; none when <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels between rows; the new file is then deleted.</param>
    /// <returns>The rows copied, the objects carried, the time taken and the new file's check.</returns>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="BlockDbConfigurationException">A setting is invalid, a provider is not a SQLite provider, or <see cref="ConversionOptions.RowsPerTransaction"/> is out of range.</exception>
    /// <exception cref="BlockDbConflictException">The target file exists; or the source holds duplicate blocks (without <see cref="ConversionOptions.MergeDuplicates"/>), a block ID the target layout cannot hold, or a hash no layout can store; or an object of another application that cannot be carried unchanged (the message names it): a virtual table; an index, view or trigger that names a BlockDb table the target layout defines differently (<c>Block</c> between <see cref="BlockLayout.TextHash"/> and the BLOB layouts); any trigger, for a <see cref="BlockLayout.KeyMap"/> target; an object named as one of the target layout's own; a column added to a BlockDb table; a rowid hidden by columns named <c>rowid</c>, <c>_rowid_</c> and <c>oid</c>; a text encoding other than the target's; or the source or the target has the <see cref="BlockLayout.Duplicati"/> layout (a Duplicati database is worked on in place, never converted). Nothing was written.</exception>
    /// <exception cref="OperationCanceledException">Cancelled; the new file was deleted.</exception>
    /// <exception cref="BlockDbException">The database failed (also when SQLite cannot create a carried object, one that needs a collation or function of its application, say); the new file was deleted.</exception>
    public static async Task<ConversionResult> ConvertAsync(
        BlockDbOptions source,
        BlockDbOptions target,
        ConversionOptions? options = null,
        IProgress<ConversionProgress>? progress = null,
        ILoggerFactory? loggerFactory = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(target);
        options ??= new ConversionOptions();
        if (options.RowsPerTransaction is < 1 or > 10_000_000)
        {
            throw new BlockDbConfigurationException(nameof(ConversionOptions.RowsPerTransaction), $"RowsPerTransaction is {options.RowsPerTransaction}; allowed: 1 to 10,000,000 rows.");
        }

        var targetPath = Path.GetFullPath(target.DataSource ?? throw new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:DataSource", "The target's DataSource is empty; give the path of the new file."));
        if (File.Exists(targetPath) || File.Exists(targetPath + "-wal") || File.Exists(targetPath + "-journal"))
        {
            throw new BlockDbConflictException($"{Quoted.Path(targetPath)} exists; a conversion writes a new file and never into an existing one. Choose another path or delete it first.");
        }

        if (target.Index.Layout is { } targetLayout && LayoutCatalog.Of(targetLayout).ConversionRefused is { } intoRefused)
        {
            throw new BlockDbConflictException($"A conversion into the {targetLayout} layout is refused: {intoRefused}. Nothing was written.");
        }

        using var activity = Instruments.ActivitySource.StartActivity("blockdb.convert");
        activity?.SetTag("blockdb.layout", target.Index.Layout.ToString());
        var clock = Stopwatch.StartNew();
        var from = Sqlite(new BlockDatabaseBuilder(source).UseLoggerFactory(loggerFactory).Build(), "source");
        await using var closeSource = from.ConfigureAwait(false);
        if (from.LayoutState.Definition.ConversionRefused is { } fromRefused)
        {
            throw new BlockDbConflictException($"{Quoted.Path(from.DataSource)} has the {from.Layout} layout, which a conversion refuses: {fromRefused}. Nothing was written.");
        }

        SqliteDatabase? to = null;
        try
        {
            to = Sqlite(new BlockDatabaseBuilder(target).UseLoggerFactory(loggerFactory).Build(), "target");
            var copied = await Task.Run(
                () =>
                {
                    using var read = from.OpenWorkConnection();
                    using var write = to.OpenWorkConnection();
                    return new LayoutCopier(read, from.LayoutState, write, to.LayoutState, options, progress, cancellationToken).Copy();
                },
                cancellationToken).ConfigureAwait(false);
            var check = await to.CheckAsync(cancellationToken).ConfigureAwait(false);
            return new ConversionResult(from.Layout, to.Layout, copied.Volumes, copied.Blocks, copied.Merged, copied.Blocksets, copied.Entries, clock.Elapsed, check, copied.Carried, copied.CarriedRows);
        }
        catch
        {
            if (to is not null)
            {
                await to.DisposeAsync().ConfigureAwait(false);
                to = null;
                foreach (var file in new[] { targetPath, targetPath + "-wal", targetPath + "-shm", targetPath + "-journal" })
                {
                    File.Delete(file);
                }

                // Only a snapshot: a file of another kind at its name (another database named after it) is not the target's.
                var snapshot = KeyMap.KeyMapFileFormat.PathOf(targetPath);
                if (KeyMap.KeyMapFileFormat.NotReplaceable(snapshot) is null)
                {
                    File.Delete(snapshot);
                }
            }

            throw;
        }
        finally
        {
            if (to is not null)
            {
                await to.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private static SqliteDatabase Sqlite(IBlockDatabase database, string which)
    {
        if (database is SqliteDatabase sqlite)
        {
            return sqlite;
        }

        database.Dispose();
        throw new BlockDbConfigurationException($"{BlockDbOptions.SectionName}:Provider", $"The {which} of a conversion is a {database.Engine} database (provider {database.ProviderName}); layouts are converted between SQLite files only.");
    }
}
