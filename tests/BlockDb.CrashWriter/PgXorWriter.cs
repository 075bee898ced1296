using System.Globalization;
using System.Security.Cryptography;
using BlockDb;

/// <summary>
/// <c>pg-xor &lt;connectionString&gt; &lt;seed&gt; &lt;ops&gt;</c>: one of many writer processes on one PostgreSQL index. Four tasks
/// select-xor-insert random blocks out of 2,000 shared by every process (TestData.Hash keys): one task on a session that
/// commits every write, three on the shared session. Prints "XOR &lt;key&gt; &lt;id&gt;" for each acknowledged call.
/// </summary>
internal static class PgXorWriter
{
    public static async Task<int> RunAsync(string connectionString, int seed, int ops)
    {
        await using var db = BlockDatabase.Open(new BlockDbOptions { Provider = "PostgreSql", ConnectionString = connectionString, Batching = { CommitEvery = 1 } });
        await using var shared = db.OpenSharedSession();
        var output = Console.Out;
        var gate = new object();
        Console.WriteLine("READY");
        await Task.WhenAll(Enumerable.Range(0, 4).Select(task => Task.Run(async () =>
        {
            var random = new Random((seed * 31) + task);
            await using var session = task == 0 ? await db.OpenSessionAsync() : null;
            for (var i = 0; i < ops / 4; i++)
            {
                var key = random.Next(2000);
                var hash = Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(key)));
                var result = session is not null
                    ? await session.SelectXorInsertAsync(BlockKey.Parse(hash, 4096))
                    : await shared.SelectXorInsertAsync(BlockKey.Parse(hash, 4096));
                lock (gate)
                {
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"XOR {key} {result.Id}"));
                }
            }
        })));
        Console.Out.Flush();
        return 0;
    }
}
