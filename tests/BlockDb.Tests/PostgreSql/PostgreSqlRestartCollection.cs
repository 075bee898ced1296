namespace BlockDb.Tests.PostgreSql;

/// <summary>The PostgreSQL restart test runs alone, after every parallel collection (a restart breaks other tests' connections).</summary>
[CollectionDefinition(nameof(PostgreSqlRestartTests), DisableParallelization = true)]
public sealed class PostgreSqlRestartCollection;
