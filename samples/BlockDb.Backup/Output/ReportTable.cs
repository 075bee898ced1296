using System.Globalization;
using Spectre.Console;
using Spectre.Console.Rendering;

namespace BlockDb.Backup.Output;

/// <summary>A Spectre.Console table of plain text cells (never parsed as markup, so paths with brackets are safe).</summary>
internal sealed class ReportTable
{
    private readonly Table _table;

    public ReportTable(string title, params string[] columns)
    {
        _table = new Table().Border(TableBorder.Rounded).Title(Markup.Escape(title));
        foreach (var column in columns)
        {
            _table.AddColumn(new TableColumn(Markup.Escape(column)));
        }
    }

    /// <summary>A row for a check finding: its count and its first IDs.</summary>
    public ReportTable Finding(string label, BlockDbFinding finding) =>
        Row(label, Count(finding.Count), string.Join(", ", finding.FirstIds.Select(Count)));

    public ReportTable Row(params string[] cells)
    {
        _table.AddRow([.. cells.Select(c => (IRenderable)new Text(c))]);
        return this;
    }

    public void Write() => AnsiConsole.Write(_table);

    public static string Count(long value) => value.ToString("N0", CultureInfo.InvariantCulture);

    public static string Number(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);

    public static string Duration(TimeSpan elapsed) => elapsed.ToString(@"hh\:mm\:ss\.fff", CultureInfo.InvariantCulture);

    /// <summary>The pragmas one per line, as <c>PragmaSettings.ToString()</c> gives them on one.</summary>
    public static string Pragmas(PragmaSettings pragmas) => pragmas.ToString().Replace(' ', '\n');
}
