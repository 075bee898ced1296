namespace BlockDb.Bench.Server;

/// <summary>Runs every part of the <c>server</c> command and prints one Markdown table per part.</summary>
internal static class ServerStudy
{
    public static async Task RunAsync(Settings s, TextWriter output)
    {
        output.WriteLine($"# PostgreSQL provider study: {s.Ops:N0} ops per workload, SQLite provider {s.SqliteProvider}, {Environment.ProcessorCount} cores");
        output.WriteLine();
        output.WriteLine("| workload | engine | ops/s | p50 µs | p99 µs | max µs |");
        output.WriteLine("|---|---|---|---|---|---|");
        foreach (var engine in new[] { "PostgreSql", s.SqliteProvider })
        {
            using var place = new Place(s, engine);
            await using var db = place.Open();
            var version = $"{db.Engine} {db.EngineVersion}";
            void Row(string name, Percentiles p) => output.WriteLine(p.Row($"{name} | {version}"));
            Row("select-xor-insert, new blocks (session, CommitEvery 1000)", await ServerWorkloads.XorNewAsync(db, 1, s.Ops));
            Row("find existing block", await ServerWorkloads.FindAsync(db, 1, s.Ops));
            Row("file of 16 known blocks + blockset, one call (files/s)", await ServerWorkloads.BlocksetsAsync(db, 1, s.Ops / 16, 16, s.Ops, oneCall: true));
            Row("file of 16 known blocks + blockset, per-block lookups (files/s)", await ServerWorkloads.BlocksetsAsync(db, 1, s.Ops / 16, 16, s.Ops, oneCall: false));
            Row("shared session, 16 tasks, new blocks (writes/s)", await ServerWorkloads.SharedAsync(db, 2, 16, s.Ops / 16));
            Row("group commit over one session, 16 tasks (writes/s)", await ServerWorkloads.GroupCommitAsync(db, 3, 16, s.Ops / 16));
            if (db.Engine == "PostgreSQL")
            {
                Row("bulk import by binary COPY (blocks/s)", await ServerWorkloads.ImportAsync(db, 4, s.ImportBlocks));
            }

            output.Flush();
        }

        output.WriteLine();
        output.WriteLine($"## Many writers: {s.Ops:N0} select-xor-inserts per writer, a quarter over a pool all writers share");
        output.WriteLine();
        output.WriteLine("| writers | engine | blocks/s | p50 µs | p99 µs | max µs | batches written again |");
        output.WriteLine("|---|---|---|---|---|---|---|");
        foreach (var writers in s.Writers)
        {
            using (var schema = new BenchSchema(s.Admin))
            {
                await using (BlockDatabase.Open(new BlockDbOptions { Provider = "PostgreSql", ConnectionString = schema.ConnectionString }))
                {
                }

                var pg = await ManyWriters.PostgreSqlAsync(schema.ConnectionString, writers, s.Ops, s.CommitEvery, Path.Combine(Path.GetTempPath(), "blockdb-bench", "writers"));
                output.WriteLine($"{pg.Row($"{writers} | PostgreSQL, {writers} process(es), CommitEvery {s.CommitEvery}")} {ManyWriters.Retries} |");
            }

            using (var place = new Place(s, s.SqliteProvider))
            {
                var sqlite = await ManyWriters.SqliteAsync(s.SqliteProvider, place.Path!, writers, s.Ops);
                output.WriteLine($"{sqlite.Row($"{writers} | SQLite {s.SqliteProvider}, 1 process, {writers} task(s), group commit")} - |");
            }

            output.Flush();
        }
    }

    /// <summary>The study's settings.</summary>
    internal sealed record Settings(string Admin, string SqliteProvider, int Ops, int[] Writers, int CommitEvery, int ImportBlocks);

    /// <summary>A fresh index for one engine: a schema on the server, or a file in a temporary folder.</summary>
    internal sealed class Place : IDisposable
    {
        private readonly BenchSchema? _schema;
        private readonly string _engine;
        private readonly string? _folder;

        public Place(Settings s, string engine)
        {
            _engine = engine;
            if (engine == "PostgreSql")
            {
                _schema = new BenchSchema(s.Admin);
            }
            else
            {
                _folder = Directory.CreateTempSubdirectory("blockdb-server-bench").FullName;
                Path = System.IO.Path.Combine(_folder, "index.db");
            }
        }

        public string? Path { get; }

        public IBlockDatabase Open() => BlockDatabase.Open(_schema is not null
            ? new BlockDbOptions { Provider = _engine, ConnectionString = _schema.ConnectionString }
            : new BlockDbOptions { Provider = _engine, DataSource = Path, Index = { Layout = BlockLayout.BlobHash } });

        public void Dispose()
        {
            _schema?.Dispose();
            if (_folder is not null)
            {
                Directory.Delete(_folder, recursive: true);
            }
        }
    }
}
