using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.KeyMap;

/// <summary>The statements a catch-up runs, prepared on the caller's connection (a session's, or the check's).</summary>
internal sealed class KeyMapStatements(ISqliteConnection connection)
{
    /// <summary><see cref="BlockDbSql.KeyMapCatchUp"/>.</summary>
    public ISqliteStatement CatchUp { get; } = connection.Prepare(BlockDbSql.KeyMapCatchUp);

    /// <summary><see cref="BlockDbSql.CountBlocks"/>: sizes the table before a full load.</summary>
    public ISqliteStatement CountBlocks { get; } = connection.Prepare(BlockDbSql.CountBlocks);

    /// <summary><see cref="BlockDbSql.KeyMapGuardRows"/>: checks the guards after the schema changed.</summary>
    public ISqliteStatement GuardRows { get; } = connection.Prepare(BlockDbSql.KeyMapGuardRows);

    /// <summary>Whether every guard trigger is there with its exact text (the state row is checked by the catch-up, which returns no row without it).</summary>
    public static bool GuardsIntact(ISqliteStatement guardRows)
    {
        try
        {
            for (var i = 0; i < BlockDbSql.KeyMapGuardTriggers.Count; i++)
            {
                if (!guardRows.Step()
                    || guardRows.ColumnText(0) != BlockDbSql.KeyMapGuardTriggers[i]
                    || guardRows.ColumnText(1) != BlockDbSql.KeyMapGuardTriggerSql[i])
                {
                    return false;
                }
            }

            return !guardRows.Step();
        }
        finally
        {
            guardRows.Reset();
        }
    }
}
