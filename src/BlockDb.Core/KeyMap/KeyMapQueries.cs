using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.KeyMap;

/// <summary>The statements a catch-up runs, prepared on the caller's connection (a session's, or the check's).</summary>
internal sealed class KeyMapQueries(ISqliteConnection connection)
{
    /// <summary>The connection the statements run on (a snapshot's checks run on it too).</summary>
    public ISqliteConnection Connection { get; } = connection;

    /// <summary><see cref="BlockDbSql.KeyMapCatchUp"/>.</summary>
    public ISqliteStatement CatchUp { get; } = connection.Prepare(BlockDbSql.KeyMapCatchUp);

    /// <summary><see cref="BlockDbSql.CountBlocks"/>: sizes the table before a full load.</summary>
    public ISqliteStatement CountBlocks { get; } = connection.Prepare(BlockDbSql.CountBlocks);

    /// <summary><see cref="BlockDbSql.KeyMapTriggerRows"/>: checks the guards after the schema changed.</summary>
    public ISqliteStatement TriggerRows { get; } = connection.Prepare(BlockDbSql.KeyMapTriggerRows);
}
