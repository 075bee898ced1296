using System.Diagnostics.Metrics;
using BlockDb.Diagnostics;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Import;

/// <summary>
/// A bulk import into a KeyMap file puts each row's entry into the database's shared key map as the row goes in, so it
/// finds its own rows with one probe (docs/ARCHITECTURE.md, M3 and M6): no other session gets an ID from an entry whose
/// row is not committed, and the entries of a rolled-back import stay as stale ones that never name the blocks that
/// later take their IDs. Seen through the map's own gauge (<c>blockdb.keymap.entries</c>) and every provider's answers.
/// </summary>
public sealed class KeyMapImportMapTests(ITestOutputHelper output) : KeyMapFileTestBase(output)
{
    /// <summary>Blocks per import transaction: more than the 1,024 blocks the import hands its session at a time.</summary>
    private const int PerTransaction = 2500;

    /// <summary>Where the input pauses (or fails): inside the second transaction, after its first 1,024 blocks were written.</summary>
    private const int Midway = PerTransaction + 1500;

    /// <summary>Rows the second transaction has written at <see cref="Midway"/>.</summary>
    private const int WrittenAtMidway = 1024;

    public static TheoryData<string> Providers() => [.. ProviderCatalog.SqliteNames];

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task An_import_adds_its_rows_to_the_shared_map_as_they_go_in_and_no_other_session_gets_an_uncommitted_one(string provider)
    {
        var path = Folder.File("shared.db");
        await using var db = Build(path, provider);
        await using var reader = await db.OpenSessionAsync();
        Assert.Null(await Find(reader, PerTransaction + 5)); // loads the (empty) map
        var seen = new List<(long Entries, long? Uncommitted, long? Committed)>();
        var result = await db.ImportBlocksAsync(
            Blocks(3 * PerTransaction, Midway, async () =>
            {
                await reader.CommitAsync(); // a read transaction of its own, begun now
                seen.Add((Entries(path), await Find(reader, PerTransaction + 5), await Find(reader, 5)));
            }),
            new ImportOptions { ItemsPerTransaction = PerTransaction });
        Assert.Equal((3L * PerTransaction, 3), (result.Created, result.Transactions));

        // Mid-transaction the map holds the written rows of the open transaction too; another session verifies the entry
        // against the file, finds no committed row and calls the block missing, while a committed one is found.
        Assert.Equal([(PerTransaction + WrittenAtMidway, null, 6)], seen);
        Assert.Equal(3L * PerTransaction, Entries(path));
        await reader.CommitAsync();
        Assert.Equal(PerTransaction + 6, await Find(reader, PerTransaction + 5));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    [Theory]
    [MemberData(nameof(Providers))]
    public async Task Entries_of_a_rolled_back_import_stay_stale_and_never_name_the_blocks_that_take_their_IDs(string provider)
    {
        var path = Folder.File("stale.db");
        await using var db = Build(path, provider);
        await using var session = await db.OpenSessionAsync();
        Assert.Null(await Find(session, 0)); // loads the (empty) map
        await Assert.ThrowsAsync<IOException>(async () =>
            await db.ImportBlocksAsync(Blocks(3 * PerTransaction, Midway, () => throw new IOException("the input failed")), new ImportOptions { ItemsPerTransaction = PerTransaction }));

        // The second transaction's rows rolled back; their entries stay in the map, naming IDs the file hands out again.
        Assert.Equal(PerTransaction + WrittenAtMidway, Entries(path));
        var rolledBack = ImportTests.Block(PerTransaction);
        Assert.Null(await Find(session, PerTransaction));
        var other = await session.SelectXorInsertAsync(TestData.Block(5_000_000, 10));
        Assert.Equal(new SelectXorInsertResult(PerTransaction + 1, true), other); // the ID the stale entry of block PerTransaction names
        Assert.Null(await Find(session, PerTransaction));
        var again = await session.SelectXorInsertAsync(rolledBack.Block);
        Assert.Equal(new SelectXorInsertResult(PerTransaction + 2, true), again);
        Assert.Equal(PerTransaction + 1, await session.FindBlockAsync(TestData.Block(5_000_000, 10)));
        Assert.Equal(PerTransaction + 2, await Find(session, PerTransaction));

        // A second run resumes: every block once, the two above found, the file clean.
        var result = await db.ImportBlocksAsync(Blocks(3 * PerTransaction, -1, () => Task.CompletedTask), new ImportOptions { ItemsPerTransaction = PerTransaction });
        Assert.Equal((2L * PerTransaction - 1, PerTransaction + 1L), (result.Created, result.Existing));
        using var raw = new RawSql(path, provider);
        Assert.Equal(0, raw.Scalar(DuplicatesSql));
        Assert.Equal(3L * PerTransaction + 1, raw.Scalar("""SELECT COUNT(*) FROM "Block" """));
        Assert.True((await db.CheckAsync()).IsClean);
    }

    private static ValueTask<long?> Find(IBlockSession session, int i)
    {
        var block = ImportTests.Block(i);
        return session.FindBlockAsync(block.Block);
    }

    /// <summary>Import blocks 0 … <paramref name="count"/> − 1, awaiting <paramref name="midway"/> before block <paramref name="at"/>.</summary>
    private static async IAsyncEnumerable<ImportBlock> Blocks(int count, int at, Func<Task> midway)
    {
        for (var i = 0; i < count; i++)
        {
            if (i == at)
            {
                await midway();
            }

            yield return ImportTests.Block(i);
        }
    }

    /// <summary>The database's map entries now, from its <c>blockdb.keymap.entries</c> gauge (this file's measurement only).</summary>
    private static long Entries(string path)
    {
        long? entries = null;
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == BlockDbDiagnostics.Name && instrument.Name == "blockdb.keymap.entries")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == "db.namespace" && Equals(tag.Value, path))
                {
                    entries = value;
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return entries ?? throw new InvalidOperationException($"No blockdb.keymap.entries measurement for {path}.");
    }

    private static IBlockDatabase Build(string path, string provider) =>
        BlockDatabase.Open(new BlockDbOptions
        {
            Provider = provider,
            DataSource = path,
            Index = { Layout = BlockLayout.KeyMap, KeyMapFile = KeyMapFileMode.Off },
            Batching = { CommitEvery = 1 },
        });
}
