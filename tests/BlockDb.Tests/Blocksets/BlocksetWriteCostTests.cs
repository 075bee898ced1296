using System.Runtime.InteropServices;

namespace BlockDb.Tests.Blocksets;

/// <summary>Tests that read SQLite's process-wide counters (<c>sqlite3_status64</c>): they run alone, with no other test's connections working meanwhile.</summary>
[CollectionDefinition(nameof(SqliteHeapCollection), DisableParallelization = true)]
public sealed class SqliteHeapCollection;

/// <summary>
/// What adding a blockset costs SQLite, measured without a clock: the heap SQLite holds while it writes the entries,
/// against the pages the blockset writes (its WAL frames). Every statement that may fail after writing some of its rows
/// gets a statement journal, and inside the blockset's savepoint SQLite keeps each one's pages until the savepoint ends
/// and walks that in-memory journal from its start at every statement
/// (<see href="https://www.sqlite.org/tempfiles.html"/>, section 2.5): a blockset over blocks whose index pages the
/// file already holds then cost more the larger the file (issue 21, defect 6). Written by statements that need no
/// statement journal, the journal holds each page the savepoint changes once, so the heap stays about the size of the
/// pages written, however large the file; and since a one-call file's writes take no savepoint on these layouts
/// (they come after every check), SQLite's heap grows only by what its page cache takes, below the pages written.
/// </summary>
[Collection(nameof(SqliteHeapCollection))]
public sealed class BlocksetWriteCostTests : ConformanceTestBase
{
    private const int SqliteStatusMemoryUsed = 0;
    private const int Blocks = 20_000;
    private const int Blocksets = 5;

    /// <summary>The SQLite matrix × each session call that writes a blockset's entries (a bulk import writes them as <c>keys</c> does, on a session of its own).</summary>
    public static IEnumerable<object[]> MatrixWithCalls() =>
        from pair in Matrix()
        from call in new[] { "ids", "keys", "file" }
        select new object[] { pair[0], pair[1], call };

    [Theory]
    [MemberData(nameof(MatrixWithCalls))]
    public async Task A_blockset_over_existing_blocks_holds_no_more_SQLite_heap_than_the_pages_it_writes_however_large_the_file(string provider, BlockLayout layout, string call)
    {
        Use(provider, layout);
        await using var db = Open(o =>
        {
            // The Recommended preset's: statement journals in memory, where their growth shows in SQLite's heap.
            o.Pragmas.JournalMode = JournalMode.Wal;
            o.Pragmas.TempStore = TempStoreMode.Memory;
        });
        await using var session = await db.OpenSessionAsync();
        var found = new SelectXorInsertResult[Blocks];
        await session.SelectXorInsertManyAsync(Enumerable.Range(0, Blocks).Select(i => TestData.Block(i, 4096)).ToArray(), found);
        await session.CommitAsync();
        var ids = found.Select(r => r.Id).ToArray();
        var keys = Enumerable.Range(0, Blocks).Select(i => TestData.Block(i, 4096)).ToArray();
        var binary = Enumerable.Range(0, Blocks).Select(i => TestData.Block(i, 4096)).ToArray();

        var ratios = new List<double>();
        for (var i = 0; i < Blocksets; i++)
        {
            // Each blockset names every block once, so each one's entries go next to the earlier blocksets' entries of
            // the same blocks (the BlockID index): pages the file already holds, more of them each time.
            using (var raw = new RawSql(DbPath))
            {
                raw.Execute("PRAGMA wal_checkpoint(TRUNCATE)");
            }

            Assert.Equal(0, new FileInfo(DbPath + "-wal").Length);
            var before = HeapHighWater(reset: true);
            _ = call switch
            {
                "ids" => await session.AddBlocksetAsync(ids),
                "keys" => await session.AddBlocksetAsync(keys),
                _ => await session.AddBlocksetAsync(binary, found),
            };
            await session.CommitAsync();
            var heap = HeapHighWater(reset: false) - before;
            var written = new FileInfo(DbPath + "-wal").Length;
            ratios.Add((double)heap / written);
        }

        // The first blockset also brings the pages it reads into the page cache; the later ones find them there.
        var series = string.Join(", ", ratios.Select(r => r.ToString("F2", System.Globalization.CultureInfo.InvariantCulture)));
        Assert.True(ratios.Max() >= 0.1, $"SQLite's heap grew by less than a tenth of the pages written for every blockset ({series}): the counter is not the provider's SQLite.");
        Assert.True(ratios.Skip(1).All(r => r <= 1.5), $"SQLite's heap while adding each blockset, per byte of WAL it wrote: {series} (the statement journal grows with the file).");
    }

    /// <summary>SQLite's heap high-water mark (bytes) since the last reset; with <paramref name="reset"/>, the current use, from which the mark starts again.</summary>
    private static long HeapHighWater(bool reset)
    {
        Assert.Equal(0, sqlite3_status64(SqliteStatusMemoryUsed, out var current, out var highWater, reset ? 1 : 0));
        return reset ? current : highWater;
    }

    [DllImport("e_sqlite3", CallingConvention = CallingConvention.Cdecl)]
    private static extern int sqlite3_status64(int op, out long current, out long highWater, int resetFlag);
}
