using BlockDb.Opening;

using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// What BlockDb runs on Duplicati's connection, inside Duplicati's transaction, counted by SQLite's statement trace
/// (not by a clock): a new block is one read after the miss and one <c>INSERT</c>, with no savepoint (a single-row
/// insert is atomic by itself); a blockset by hash and size reads each block once and opens one savepoint, the call's
/// step, for all its rows; and the rows stay all or nothing all the same: a failed single-block call and a failed
/// blockset leave nothing of themselves in the caller's transaction, whose earlier rows stay.
/// </summary>
public sealed class DuplicatiInPlaceStatementTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private static readonly DuplicatiMode Caller = new(ProviderCatalog.MicrosoftData, true);

    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task A_new_block_is_its_lookup_one_read_and_one_insert_without_a_savepoint()
    {
        var path = template.CopyTo(_folder);
        await using var scope = await DuplicatiScope.OpenAsync(path, Caller);
        var volume = await scope.Session.RegisterVolumeAsync("duplicati-b0000000000000001.dblock.zip");
        using var trace = new StatementTracer(scope.Connection!, on: true);

        var blocks = File("new", 5);
        foreach (var block in blocks)
        {
            Assert.True((await scope.Session.SelectXorInsertAsync(block, volume)).Created);
        }

        trace.On = false;
        var statements = trace.Statements;
        Assert.DoesNotContain(statements, s => s.Contains("SAVEPOINT", StringComparison.OrdinalIgnoreCase) || s.StartsWith("RELEASE", StringComparison.OrdinalIgnoreCase));
        Assert.DoesNotContain(statements, s => s.Contains("RETURNING", StringComparison.OrdinalIgnoreCase));
        Assert.Equal(3 * blocks.Count, statements.Count); // find, the take-back and volume read, the insert
        Assert.Equal(blocks.Count, statements.Count(s => s.StartsWith("INSERT INTO \"Block\"", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task A_blockset_by_key_reads_each_block_once_and_opens_one_savepoint_for_all_its_rows()
    {
        var path = template.CopyTo(_folder);
        await using var scope = await DuplicatiScope.OpenAsync(path, Caller);
        var s = scope.Session;
        var volume = await s.RegisterVolumeAsync("duplicati-b0000000000000002.dblock.zip");
        var file = File("forty", 40); // two blocklists
        foreach (var block in file.Concat(Blocklists(file)))
        {
            await s.SelectXorInsertAsync(block, volume);
        }

        using var trace = new StatementTracer(scope.Connection!, on: true);
        var blockset = await s.AddBlocksetAsync(file.ToArray(), new SelectXorInsertResult[file.Count], BlockHash.Parse(FullHash("forty")), volume);
        trace.On = false;
        var statements = trace.Statements;

        Assert.Equal(1, statements.Count(t => t.StartsWith("SAVEPOINT", StringComparison.Ordinal)));
        // One read per block (its select-xor-insert's lookup, with its volume's state: the entries take that ID, the
        // blocklists its key), and one per blocklist block (it must exist).
        Assert.Equal(file.Count + 2, statements.Count(t => t.Contains("FROM \"Block\"", StringComparison.Ordinal)));
        Assert.DoesNotContain(statements, t => t.Contains("FROM \"Blockset\"", StringComparison.Ordinal)); // inserted with OR IGNORE: not found first
        Assert.Equal(2, statements.Count(t => t.StartsWith("INSERT INTO \"BlocklistHash\"", StringComparison.Ordinal)));

        // Found again: the same ID and no second row.
        Assert.Equal(blockset, await s.AddBlocksetAsync(file, FullHash("forty")));
        Assert.Equal(1, CountInCaller(scope, $"""SELECT COUNT(*) FROM "Blockset" WHERE "FullHash" = '{FullHash("forty")}'"""));
    }

    [Fact]
    public async Task A_failed_single_block_call_and_a_failed_blockset_leave_nothing_of_themselves_and_the_callers_rows_stay()
    {
        var path = template.CopyTo(_folder);
        await using (var scope = await DuplicatiScope.OpenAsync(path, Caller))
        {
            var s = scope.Session;
            var volume = await s.RegisterVolumeAsync("duplicati-b0000000000000003.dblock.zip");
            var kept = await s.SelectXorInsertAsync(new BlockKey(Key("kept", 0).Hash, Blocksize), volume);
            var refused = Key("refused", 0);

            // The caller's own trigger aborts the block's INSERT: SQLite backs the statement out, the call fails.
            scope.Execute($"""CREATE TEMP TRIGGER "RefuseOne" BEFORE INSERT ON main."Block" WHEN NEW."Hash" = '{refused.Hash}' BEGIN SELECT RAISE(ABORT, 'refused by the caller'); END""");
            var failure = await Assert.ThrowsAnyAsync<BlockDbException>(async () => await s.SelectXorInsertAsync(refused, volume));
            Assert.Contains("refused by the caller", failure.Message, StringComparison.Ordinal);
            Assert.Equal(0, CountInCaller(scope, $"""SELECT COUNT(*) FROM "Block" WHERE "Hash" = '{refused.Hash}'"""));

            // A blockset whose second blocklist block is missing fails after its Blockset row and entries: the call's step takes them back.
            var file = File("partial", 40);
            foreach (var block in file.Concat(Blocklists(file).Take(1)))
            {
                await s.SelectXorInsertAsync(block, volume);
            }

            var blocksetsBefore = CountInCaller(scope, """SELECT COUNT(*) FROM "Blockset" """);
            await Assert.ThrowsAsync<BlockNotFoundException>(async () => await s.AddBlocksetAsync(file, FullHash("partial")));
            Assert.Equal(blocksetsBefore, CountInCaller(scope, """SELECT COUNT(*) FROM "Blockset" """));
            Assert.Equal(0, CountInCaller(scope, $"""SELECT COUNT(*) FROM "Blockset" WHERE "FullHash" = '{FullHash("partial")}'"""));
            Assert.Equal(0, CountInCaller(scope, """SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" NOT IN (SELECT "ID" FROM "Blockset")"""));
            Assert.Equal(0, CountInCaller(scope, """SELECT COUNT(*) FROM "BlocksetEntry" WHERE "BlocksetID" NOT IN (SELECT "ID" FROM "Blockset")"""));

            // The session goes on, and what it wrote before stays in the caller's transaction.
            Assert.Equal(kept.Id, await s.FindBlockAsync(new BlockKey(Key("kept", 0).Hash, Blocksize)));
            Assert.Equal(file.Count + 2, CountInCaller(scope, $"""SELECT COUNT(*) FROM "Block" WHERE "VolumeID" = {volume}"""));
            scope.Execute("""DROP TRIGGER temp."RefuseOne" """);
        }

        await AssertCleanAsync(path);
    }

    private static long CountInCaller(DuplicatiScope scope, string sql)
    {
        using var command = scope.Connection!.CreateCommand();
        command.Transaction = scope.Transaction!.Current;
        command.CommandText = sql;
        return (long)command.ExecuteScalar()!;
    }
}
