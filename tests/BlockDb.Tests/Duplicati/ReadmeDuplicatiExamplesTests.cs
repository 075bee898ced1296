using System.Security.Cryptography;
using BlockDb.Duplicati.Fixture;
using BlockDb.MicrosoftData;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.Duplicati;

/// <summary>
/// The README's "Using BlockDb from Duplicati" examples, compiled and run on a replayed Duplicati file; each example's
/// text between its <c>// README:</c> markers appears in README.md word for word, so the README cannot drift from code
/// that runs.
/// </summary>
public sealed class ReadmeDuplicatiExamplesTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public async Task Inside_Duplicatis_transaction_the_example_writes_a_file_Duplicatis_rules_accept()
    {
        var path = template.CopyTo(_folder);
        var fileBlocks = DuplicatiSessions.File("readme", 40);
        var fullHash = DuplicatiSessions.FullHash("readme");
        long blockset;

        // README: inside
        // Duplicati's connection and its always-open deferred transaction (here opened by hand).
        using var connection = new SqliteConnection($"Data Source={path};Pooling=False");
        connection.Open();
        using var transaction = connection.BeginTransaction(deferred: true);

        await using (var blocks = new BlockDatabaseBuilder(new BlockDbOptions())
            .UseCallerConnection(MicrosoftDataDriver.Instance.Borrow(connection))
            .Build())                                                  // recognises the file: BlockLayout.Duplicati
        await using (var session = await blocks.OpenSessionAsync())
        {
            // A Blocks volume, Temporary, under the newest Operation row (Duplicati's own operation).
            var volume = await session.RegisterVolumeAsync($"duplicati-b{Guid.NewGuid():N}.dblock.zip");   // Duplicati's name
            foreach (var block in fileBlocks)                          // the file's blocks: BlockKey(hash, size)
            {
                await session.SelectXorInsertAsync(block, volume);   // Created: upload its bytes
            }

            // The blocklist blocks (as Duplicati's splitter cuts them): stored, then recorded, before the blockset.
            const int blocksize = 1024, hashSize = 32;                   // Configuration: blocksize, blockhash SHA256
            var list = new byte[blocksize];
            var keys = fileBlocks.ToArray();
            for (var k = 0L; k < DuplicatiBlocklists.Count(keys.Length, blocksize, hashSize); k++)
            {
                var length = DuplicatiBlocklists.Write(keys, k, blocksize, hashSize, list);
                await session.SelectXorInsertAsync(new BlockKey(new BlockHash(SHA256.HashData(list.AsSpan(0, length))), length), volume);
            }

            // Found by (FullHash, Length), or written with its entries and BlocklistHash rows (computed by BlockDb).
            blockset = await session.AddBlocksetAsync(keys, new SelectXorInsertResult[keys.Length], BlockHash.Parse(fullHash), volume);
        }                                                              // dispose BlockDb before the connection

        transaction.Commit();                                          // Duplicati commits its rows and BlockDb's
        // README: end

        connection.Close();
        Assert.Equal(2, DuplicatiFiles.Scalar(path, $"""SELECT COUNT(*) FROM "BlocklistHash" WHERE "BlocksetID" = {blockset}"""));
        await DuplicatiSessions.AssertCleanAsync(path);
        AssertInReadme("inside");
    }

    [Fact]
    public async Task In_place_standalone_and_upgraded_the_examples_run()
    {
        var path = template.CopyTo(_folder);

        // README: standalone
        await using (var db = BlockDatabase.Open(new BlockDbOptions { DataSource = path }))   // BlockLayout.Duplicati
        {
            var check = await db.CheckAsync();              // BlockDb's findings and Duplicati's rules (LayoutRules)
            Console.WriteLine(check.IsClean ? "clean" : check.ToString());
        }
        // README: end

        // README: upgraded
        // With no other program holding the file open: drops BlocksetEntry_BlocksetID (the primary key serves it).
        var applied = await DuplicatiUpgrade.ApplyAsync(new BlockDbOptions { DataSource = path });
        // ... and back to Duplicati's own Schema.sql form, exactly:
        await DuplicatiUpgrade.RevertAsync(new BlockDbOptions { DataSource = path });
        // README: end

        Assert.NotEmpty(applied);
        await DuplicatiSessions.AssertCleanAsync(path);
        AssertInReadme("standalone");
        AssertInReadme("upgraded");
    }

    /// <summary>The example between <c>// README: name</c> and <c>// README: end</c> in this file, unindented, is in README.md.</summary>
    private static void AssertInReadme(string name, [System.Runtime.CompilerServices.CallerFilePath] string source = "")
    {
        var lines = File.ReadAllLines(source);
        var start = Array.FindIndex(lines, l => l.Trim() == $"// README: {name}") + 1;
        var end = Array.FindIndex(lines, start, l => l.Trim() == "// README: end");
        var indent = lines[start].Length - lines[start].TrimStart().Length;
        var example = string.Join('\n', lines[start..end].Select(l => l.Length >= indent ? l[indent..] : l.TrimStart()));
        var readme = File.ReadAllText(Path.Combine(Path.GetDirectoryName(source)!, "..", "..", "..", "README.md")).Replace("\r\n", "\n", StringComparison.Ordinal);
        Assert.True(readme.Contains(example, StringComparison.Ordinal), $"README.md lacks the '{name}' example:\n{example}");
    }
}
