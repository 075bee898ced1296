using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.KeyMap;

/// <summary>What the file's triggers are, against the KeyMap guards.</summary>
/// <param name="GuardsExact">Every guard is there with its exact text.</param>
/// <param name="Foreign">The names of the triggers that are not guards (none allowed in a KeyMap file).</param>
internal sealed record KeyMapTriggers(bool GuardsExact, IReadOnlyList<string> Foreign)
{
    /// <summary>Why a KeyMap file holds no trigger BlockDb did not create [F4].</summary>
    public const string Reason = "a trigger can write blocks inside BlockDb's own transaction that its key map never sees (and store them twice)";

    /// <summary>Whether the file's triggers are exactly the guards.</summary>
    public bool Intact => GuardsExact && Foreign.Count == 0;

    /// <summary>Reads every trigger of the main schema through <see cref="BlockDbSql.KeyMapTriggerRows"/>.</summary>
    public static KeyMapTriggers Read(ISqliteStatement triggerRows)
    {
        var found = new Dictionary<string, string?>(StringComparer.Ordinal);
        try
        {
            while (triggerRows.Step())
            {
                found[triggerRows.ColumnText(0) ?? string.Empty] = triggerRows.ColumnText(1);
            }
        }
        finally
        {
            triggerRows.Reset();
        }

        var exact = true;
        for (var i = 0; i < BlockDbSql.KeyMapGuardTriggers.Count; i++)
        {
            exact &= found.Remove(BlockDbSql.KeyMapGuardTriggers[i], out var sql) && sql == BlockDbSql.KeyMapGuardTriggerSql[i];
        }

        return new KeyMapTriggers(exact, [.. found.Keys.Order(StringComparer.Ordinal)]);
    }

    /// <summary>Reads the triggers on a connection.</summary>
    public static KeyMapTriggers Read(ISqliteConnection connection)
    {
        using var rows = connection.Prepare(BlockDbSql.KeyMapTriggerRows);
        return Read(rows);
    }

    /// <summary>Why the map cannot trust a file whose triggers are not intact.</summary>
    public string Problem(string? path) => Foreign.Count > 0
        ? $"{(path is null ? "The file" : Quoted.Path(path))} holds triggers BlockDb did not create ({string.Join(", ", Foreign.Select(Quoted.Value))}); the KeyMap layout allows none, because {Reason}. Drop them (DROP TRIGGER), or keep them in a file of the BlobHash or TextHash layout, whose unique index needs no such guarantee."
        : "The KeyMap guards of this file were changed by SQL outside BlockDb while it was open; BlockDb can no longer rely on the key map. Reopen the database for writing to restore them.";
}
