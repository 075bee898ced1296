// BlockDb's consumer test: a new application built against the packages in the local feed (never the projects),
// configured the way a backup engine would be. eng/package-test.sh runs it once per provider over one index:
//
//   BlockDb__Provider       the provider (MicrosoftData, SystemData, PInvoke, PostgreSql)
//   BlockDb__DataSource     the SQLite file, shared by the runs (each run reads what the earlier ones wrote)
//   BlockDb__ConnectionString  the server, for PostgreSql
//   Consumer__ReopenWith    after writing, reopen the index with this other provider and read it back
//   Consumer__Expect        "ConfigurationError": the provider must fail to load with BlockDbConfigurationException
//                           naming it and what to install (a lean application, a missing System.Data.SQLite.dll, a
//                           missing native e_sqlite3 library)
//   Consumer__ExpectMessage with ConfigurationError: texts the message must also contain, separated by '|'
//
// Steps: open (services.AddBlockDb(configuration)), read back every blockset earlier runs wrote, select-xor-insert
// blocks shared by all runs and blocks of its own (Created must say whether the block was there), add a blockset,
// list it, check the counts, then reopen with another provider. Exit 0 when everything holds, 1 otherwise.
using System.Reflection;
using System.Security.Cryptography;
using System.Text;
using BlockDb;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

var configuration = new ConfigurationBuilder().AddEnvironmentVariables().Build();
var consumer = configuration.GetSection("Consumer");
var provider = configuration["BlockDb:Provider"] ?? "(default)";
var built = typeof(IBlockDatabase).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
Console.WriteLine($"consumer: BlockDb {built}, provider {provider}");

try
{
    if (string.Equals(consumer["Expect"], "ConfigurationError", StringComparison.OrdinalIgnoreCase))
    {
        return await ExpectConfigurationErrorAsync(configuration, provider, consumer["ExpectMessage"]?.Split('|') ?? []);
    }

    await using (var services = Register(configuration))
    {
        var db = services.GetRequiredService<IBlockDatabase>();
        Console.WriteLine($"consumer: opened {db.DataSource} with {db.ProviderName} ({db.Engine} {db.EngineVersion}), layout {db.Layout}");
        Check(string.Equals(db.ProviderName, provider, StringComparison.OrdinalIgnoreCase), $"the database reports provider {db.ProviderName}, configured {provider}");
        var earlier = await ReadBackAsync(db);
        var (blocksetId, blockIds) = await WriteAsync(db, provider);
        Console.WriteLine($"consumer: read back {earlier} earlier blockset(s), wrote blockset {blocksetId} of {blockIds.Count} blocks");

        if (consumer["ReopenWith"] is { Length: > 0 } other)
        {
            await db.DisposeAsync();
            var reopened = new Dictionary<string, string?> { ["BlockDb:Provider"] = other };
            var otherConfiguration = new ConfigurationBuilder().AddConfiguration(configuration).AddInMemoryCollection(reopened).Build();
            await using var otherServices = Register(otherConfiguration);
            var again = otherServices.GetRequiredService<IBlockDatabase>();
            Check(string.Equals(again.ProviderName, other, StringComparison.OrdinalIgnoreCase), $"reopened with {again.ProviderName}, asked for {other}");
            await using var session = await again.OpenSessionAsync();
            var listed = await ListAsync(session, blocksetId, blockIds.Count);
            Check(listed.Select(b => b.BlockId).SequenceEqual(blockIds), $"{other} lists blockset {blocksetId} differently");
            var total = await ReadBackAsync(again);
            Console.WriteLine($"consumer: reopened with {again.ProviderName}: blockset {blocksetId} and {total} blockset(s) read back");
        }
    }

    Console.WriteLine($"consumer: ok ({provider})");
    return 0;
}
catch (Exception e)
{
    Console.Error.WriteLine($"consumer: FAILED ({provider}): {e}");
    return 1;
}

static ServiceProvider Register(IConfiguration configuration)
{
    var services = new ServiceCollection();
    services.AddBlockDb(configuration);
    return services.BuildServiceProvider();
}

// Every blockset in the index lists as many blocks as it says, of the length it says.
static async Task<int> ReadBackAsync(IBlockDatabase db)
{
    await using var session = await db.OpenSessionAsync();
    var blocksets = 0;
    await foreach (var blockset in db.EnumerateBlocksetsAsync())
    {
        var blocks = await ListAsync(session, blockset.Id, blockset.BlockCount);
        Check(blocks.Length == blockset.BlockCount, $"blockset {blockset.Id} lists {blocks.Length} blocks, says {blockset.BlockCount}");
        Check(blocks.Sum(b => b.Block.Size) == blockset.Length, $"blockset {blockset.Id}'s blocks add up to {blocks.Sum(b => b.Block.Size)} bytes, says {blockset.Length}");
        blocksets++;
    }

    var counts = await session.GetCountsAsync();
    Check(blocksets == counts.Blocksets, $"enumerated {blocksets} blocksets, the counts say {counts.Blocksets}");
    var enumerated = 0;
    await foreach (var _ in db.EnumerateBlocksAsync())
    {
        enumerated++;
    }

    Check(enumerated == counts.Blocks, $"enumerated {enumerated} blocks, the counts say {counts.Blocks}");
    return blocksets;
}

// Ten blocks every run shares and five of this run's own, recorded as one file's blockset.
static async Task<(long BlocksetId, IReadOnlyList<long> BlockIds)> WriteAsync(IBlockDatabase db, string provider)
{
    await using var session = await db.OpenSessionAsync();
    var before = await session.GetCountsAsync();
    var run = $"{provider}-{Guid.NewGuid():N}";
    var blocks = Enumerable.Range(0, 10).Select(i => (Hash: Hash($"shared-{i}"), Size: 4096L))
        .Concat(Enumerable.Range(0, 5).Select(i => (Hash: Hash($"{run}-{i}"), Size: i == 4 ? 100L : 4096L)))
        .ToList();
    var ids = new List<long>();
    var keys = new List<BlockKey>();
    var created = 0;
    foreach (var (hash, size) in blocks)
    {
        var key = BlockKey.Parse(hash, size);
        var existing = await session.FindBlockAsync(key);
        var result = await session.SelectXorInsertAsync(key);
        Check(result.Created == existing is null, $"select-xor-insert of {hash} said Created={result.Created}, but FindBlock found {existing?.ToString() ?? "nothing"}");
        Check(existing is null || existing == result.Id, $"select-xor-insert of {hash} returned ID {result.Id}, FindBlock {existing}");
        Check(!result.Created || (await session.SelectXorInsertAsync(key)) == new SelectXorInsertResult(result.Id, false), $"a second select-xor-insert of {hash} inserted again");
        ids.Add(result.Id);
        keys.Add(key);
        created += result.Created ? 1 : 0;
    }

    var fullHash = Hash(run);
    var results = new SelectXorInsertResult[keys.Count];
    var blocksetId = await session.AddBlocksetAsync(keys.ToArray(), results, BlockHash.Parse(fullHash));
    Check(results.Select(r => r.Id).SequenceEqual(ids) && !results.Any(r => r.Created), "the blockset's own select-xor-insert did not find the blocks just inserted");
    await session.CommitAsync();

    var listed = await ListAsync(session, blocksetId, ids.Count);
    Check(listed.Select(b => b.BlockId).SequenceEqual(ids), "the blockset lists other blocks than it was given");
    var info = await session.GetBlocksetAsync(blocksetId);
    Check(info.Length == blocks.Sum(b => b.Size) && info.BlockCount == blocks.Count, $"blockset {blocksetId}: length {info.Length}, {info.BlockCount} blocks");
    Check(await session.FindBlocksetAsync(BlockHash.Parse(fullHash), info.Length) == blocksetId, "FindBlockset does not find the new blockset");
    var after = await session.GetCountsAsync();
    Check(after == new BlockDbCounts(before.Blocks + created, before.Blocksets + 1, before.BlocksetEntries + blocks.Count), $"counts went from {before} to {after} after {created} new blocks and one blockset of {blocks.Count}");
    return (blocksetId, ids);
}

// The provider must fail to load with BlockDbConfigurationException naming it and the expected texts (never a
// type-initializer crash or a DllNotFoundException).
static async Task<int> ExpectConfigurationErrorAsync(IConfiguration configuration, string provider, string[] texts)
{
    try
    {
        await using var services = Register(configuration);
        var db = services.GetRequiredService<IBlockDatabase>();
        Console.Error.WriteLine($"consumer: FAILED: provider {db.ProviderName} loaded, a BlockDbConfigurationException was expected");
        return 1;
    }
    catch (BlockDbConfigurationException e) when (e.Message.Contains(provider, StringComparison.OrdinalIgnoreCase)
        && texts.All(t => e.Message.Contains(t, StringComparison.Ordinal)))
    {
        Console.WriteLine($"consumer: ok, as expected: {e.GetType().Name}: {e.Message}");
        return 0;
    }
}

// A blockset's blocks into a buffer one longer than the count expected, so a longer listing shows.
static async Task<BlocksetBlock[]> ListAsync(IBlockReader reader, long blocksetId, int expected)
{
    var buffer = new BlocksetBlock[expected + 1];
    var count = await reader.ListBlocksetBlocksAsync(blocksetId, 0, buffer);
    return buffer[..count];
}

static string Hash(string text) => Convert.ToBase64String(SHA256.HashData(Encoding.UTF8.GetBytes(text)));

static void Check(bool condition, string failure)
{
    if (!condition)
    {
        throw new InvalidOperationException(failure);
    }
}
