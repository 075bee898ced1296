namespace BlockDb.Tests.Support;

/// <summary>A fact that needs the PostgreSQL server: skipped, with how to start one, when there is none (and not in CI).</summary>
public sealed class PostgresFactAttribute : FactAttribute
{
    public PostgresFactAttribute() => Skip = PostgreSqlServer.SkipReason;
}
