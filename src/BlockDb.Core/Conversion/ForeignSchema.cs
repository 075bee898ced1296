using System.Text;
using System.Text.RegularExpressions;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;

namespace BlockDb.Conversion;

/// <summary>
/// The schema objects of a source file that BlockDb does not own (a backup engine's own tables, their indexes, views and
/// triggers), read from the source's snapshot and checked against the target layout before anything is copied; the
/// <see cref="LayoutCopier"/> then carries them into the new file unchanged: each with its own <c>CREATE</c> text from
/// <c>sqlite_schema</c>, the tables with every row at its rowid and their <c>AUTOINCREMENT</c> counters, the indexes,
/// views and triggers after every row (so no trigger fires on the copy), each kind in <c>sqlite_schema</c> order.
/// What cannot be carried unchanged is refused (<see cref="BlockDbConflictException"/>): a virtual table; an index, view
/// or trigger naming a BlockDb table whose definition differs between the two layouts (<c>Block</c> between TextHash and
/// the BLOB layouts); a trigger, when the target layout allows none (KeyMap); an object named as one of the target's own;
/// a column another application added to a BlockDb table; a source whose text encoding differs from the target's.
/// <c>sqlite_stat1</c>-<c>4</c> (statistics of <c>ANALYZE</c>) are not carried.
/// </summary>
internal sealed partial class ForeignSchema
{
    /// <summary>Read with <c>typeof()</c> as one of these, so the value is carried in its own storage class.</summary>
    public const int Null = 0, Integer = 1, Real = 2, Text = 3, Blob = 4;

    private ForeignSchema(IReadOnlyList<ForeignTable> tables, IReadOnlyList<(string Name, string Sql)> others)
    {
        Tables = tables;
        Others = others;
    }

    /// <summary>The tables to carry, in <c>sqlite_schema</c> order.</summary>
    public IReadOnlyList<ForeignTable> Tables { get; }

    /// <summary>The indexes, then views, then triggers to create after every row is copied, each kind in <c>sqlite_schema</c> order.</summary>
    public IReadOnlyList<(string Name, string Sql)> Others { get; }

    /// <summary>Reads the objects to carry from <paramref name="source"/> (inside its read transaction) and refuses what cannot be carried.</summary>
    /// <param name="source">The source connection, in its read transaction.</param>
    /// <param name="from">The source layout.</param>
    /// <param name="target">The new file's connection (its schema created, nothing copied yet).</param>
    /// <param name="to">The target layout.</param>
    /// <exception cref="BlockDbConflictException">An object cannot be carried unchanged; nothing was written.</exception>
    public static ForeignSchema Read(ISqliteConnection source, LayoutDefinition from, ISqliteConnection target, LayoutDefinition to)
    {
        var owned = Owned(from);
        var targets = Owned(to);
        var changed = new HashSet<string>(owned.Keys.Concat(targets.Keys).Where(n => !owned.TryGetValue(n, out var a) || !targets.TryGetValue(n, out var b) || a != b), StringComparer.OrdinalIgnoreCase);
        var objects = new List<(string Type, string Name, string Table, string? Sql)>();
        using (var rows = source.Prepare(BlockDbSql.CarrySchemaRows))
        {
            while (rows.Step())
            {
                objects.Add((rows.ColumnText(0) ?? string.Empty, rows.ColumnText(1) ?? string.Empty, rows.ColumnText(2) ?? string.Empty, rows.ColumnText(3)));
            }
        }

        var sequences = objects.Any(o => o.Type == "table" && o.Name == "sqlite_sequence") ? Sequences(source) : [];
        var tables = new List<ForeignTable>();
        var others = new List<(string Type, string Name, string Sql)>();
        foreach (var (type, name, table, sql) in objects)
        {
            if (owned.ContainsKey(name))
            {
                if (type == "table" && targets.ContainsKey(name))
                {
                    RefuseAddedColumns(source, target, name, to);
                }

                continue;
            }

            // SQLite's own objects (sqlite_sequence, carried per table below; sqlite_stat1-4) and the indexes of
            // constraints (no SQL text: created with their table).
            if (name.StartsWith("sqlite_", StringComparison.OrdinalIgnoreCase) || sql is null)
            {
                continue;
            }

            var what = $"The {type} {Quoted.Value(name)} of the source";
            if (targets.ContainsKey(name))
            {
                throw Refused(what, $"the {to.Layout} layout creates an object of that name itself", "Rename it (or drop it) before converting", to);
            }

            if (type == "table")
            {
                if (sql.StartsWith("CREATE VIRTUAL TABLE", StringComparison.OrdinalIgnoreCase))
                {
                    throw Refused(what, "it is a virtual table, whose rows live in its module (and its shadow tables) and cannot be copied as rows", "Drop it before converting and create it again in the new file", to);
                }

                tables.Add(ForeignTable.Read(source, name, sql, sequences.TryGetValue(name, out var sequence) ? sequence : null, what, to));
                continue;
            }

            if (to.ForeignTriggersRefused is { } reason && type == "trigger")
            {
                throw Refused(what, $"the {to.Layout} layout allows no trigger BlockDb did not create: {reason}", $"Drop it before converting, or convert to a layout that allows triggers ({string.Join(", ", LayoutCatalog.All.Where(l => l.ForeignTriggersRefused is null && l.ConversionRefused is null).Select(l => l.Layout))})", to);
            }

            var named = type == "index" ? [table] : Names(sql);
            if (named.FirstOrDefault(changed.Contains) is { } blockDbTable)
            {
                throw Refused(what, $"it names BlockDb's {Quoted.Value(blockDbTable)}, which the {to.Layout} layout defines differently from {from.Layout} (hashes stored as {to.HashType}, not {from.HashType}; or absent), so it would work differently or not at all", $"Drop it before converting and create it again for the {to.Layout} layout afterwards", to);
            }

            others.Add((type, name, sql));
        }

        // Text is carried as its bytes, which mean the same text only in the same encoding (BlockDb creates UTF-8 files).
        if (tables.Count > 0 && source.QueryText("PRAGMA encoding") is var encoding && encoding != target.QueryText("PRAGMA encoding"))
        {
            throw Refused($"The table {Quoted.Value(tables[0].Name)} of the source", $"the source's text encoding is {encoding}, the new file's {target.QueryText("PRAGMA encoding")}", "Convert a source in the target's encoding", to);
        }

        string[] order = ["index", "view", "trigger"];
        return new ForeignSchema(tables, [.. others.OrderBy(o => Array.IndexOf(order, o.Type)).Select(o => (o.Name, o.Sql))]);
    }

    /// <summary>A quoted SQL identifier (<c>"</c> doubled inside), for a name read from <c>sqlite_schema</c>.</summary>
    public static string Identifier(string name) => "\"" + name.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"";

    /// <summary>The refusal: what cannot be carried, why, and what to do.</summary>
    public static BlockDbConflictException Refused(string what, string why, string remedy, LayoutDefinition to) => new(
        $"{what} is not BlockDb's and cannot be carried into the new {to.Layout} file unchanged: {why}. A conversion carries another application's tables (every row at its rowid), indexes, views and triggers as they are, except virtual tables and objects that would work differently in the new layout. {remedy}. Nothing was written.");

    /// <summary>Every object a layout creates (its tables, indexes and triggers, and the settings table), by name, with its DDL.</summary>
    private static Dictionary<string, string> Owned(LayoutDefinition layout)
    {
        var owned = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var sql in layout.CreateSchema().Append(BlockDbSql.SettingsTableIfMissing))
        {
            if (CreateName().Match(sql) is { Success: true } match)
            {
                owned[match.Groups["name"].Value] = sql.Replace(" IF NOT EXISTS", string.Empty, StringComparison.Ordinal);
            }
        }

        return owned;
    }

    /// <summary>Refuses a column another application added to BlockDb's <paramref name="table"/>: the copy writes BlockDb's columns only.</summary>
    private static void RefuseAddedColumns(ISqliteConnection source, ISqliteConnection target, string table, LayoutDefinition to)
    {
        var kept = new HashSet<string>(Columns(target, table).Select(c => c.Name), StringComparer.OrdinalIgnoreCase);
        if (Columns(source, table).Select(c => c.Name).FirstOrDefault(c => !kept.Contains(c)) is { } added)
        {
            throw Refused(
                $"The column {Quoted.Value(added)} of BlockDb's table {Quoted.Value(table)} in the source",
                "a conversion writes BlockDb's own columns of its tables and would drop it",
                "Move that data into a table of the application's own (which a conversion carries), then drop the column",
                to);
        }
    }

    /// <summary>Every column of <paramref name="table"/> with its <c>hidden</c> flag (0: ordinary; 2, 3: generated), in order.</summary>
    public static List<(string Name, long Hidden)> Columns(ISqliteConnection connection, string table)
    {
        var columns = new List<(string, long)>();
        using var rows = connection.Prepare(BlockDbSql.CarryColumns);
        rows.BindText(1, table);
        while (rows.Step())
        {
            columns.Add((rows.ColumnText(0) ?? string.Empty, rows.ColumnInt64(1)));
        }

        return columns;
    }

    private static Dictionary<string, long> Sequences(ISqliteConnection source)
    {
        var sequences = new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase);
        using var rows = source.Prepare(BlockDbSql.CarrySequencesOut);
        while (rows.Step())
        {
            sequences[rows.ColumnText(0) ?? string.Empty] = rows.ColumnInt64(1);
        }

        return sequences;
    }

    /// <summary>
    /// The identifiers and bare words of SQL text (quoted names unquoted), string literals and comments skipped: every
    /// name a view or trigger may use. A word that is no table (a column, a keyword) is harmless here: it only matters
    /// when it is the name of a BlockDb table.
    /// </summary>
    internal static List<string> Names(string sql)
    {
        var names = new List<string>();
        var i = 0;
        while (i < sql.Length)
        {
            var c = sql[i];
            var next = i + 1 < sql.Length ? sql[i + 1] : '\0';
            if (c == '-' && next == '-')
            {
                var end = sql.IndexOf('\n', i);
                i = end < 0 ? sql.Length : end + 1;
            }
            else if (c == '/' && next == '*')
            {
                var end = sql.IndexOf("*/", i + 2, StringComparison.Ordinal);
                i = end < 0 ? sql.Length : end + 2;
            }
            else if (c is '\'' or '"' or '`')
            {
                // A string literal or a quoted name: up to the closing quote, a doubled quote standing for one.
                var text = new StringBuilder();
                for (i++; i < sql.Length; i++)
                {
                    if (sql[i] == c)
                    {
                        if (i + 1 < sql.Length && sql[i + 1] == c)
                        {
                            i++;
                        }
                        else
                        {
                            break;
                        }
                    }

                    text.Append(sql[i]);
                }

                i++;
                if (c != '\'')
                {
                    names.Add(text.ToString());
                }
            }
            else if (c == '[')
            {
                var end = sql.IndexOf(']', i + 1);
                end = end < 0 ? sql.Length : end;
                names.Add(sql[(i + 1)..end]);
                i = end + 1;
            }
            else if (IsWord(c))
            {
                var start = i;
                while (i < sql.Length && IsWord(sql[i]))
                {
                    i++;
                }

                names.Add(sql[start..i]);
            }
            else
            {
                i++;
            }
        }

        return names;
    }

    private static bool IsWord(char c) => char.IsAsciiLetterOrDigit(c) || c is '_' or '$' || c >= '\u0080';

    [GeneratedRegex("^CREATE (?:UNIQUE )?(?:TABLE|INDEX|TRIGGER|VIEW) (?:IF NOT EXISTS )?\"(?<name>[^\"]+)\"", RegexOptions.CultureInvariant)]
    private static partial Regex CreateName();
}
