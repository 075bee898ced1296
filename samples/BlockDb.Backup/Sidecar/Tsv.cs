using System.Text;

namespace BlockDb.Backup.Sidecar;

/// <summary>Escapes a TSV field so any path fits on one line: <c>\</c> → <c>\\</c>, tab → <c>\t</c>, LF → <c>\n</c>, CR → <c>\r</c>.</summary>
internal static class Tsv
{
    public static string Escape(string field)
    {
        if (field.AsSpan().IndexOfAny("\\\t\n\r") < 0)
        {
            return field;
        }

        var sb = new StringBuilder(field.Length + 8);
        foreach (var c in field)
        {
            sb.Append(c switch
            {
                '\\' => @"\\",
                '\t' => @"\t",
                '\n' => @"\n",
                '\r' => @"\r",
                _ => null,
            } ?? c.ToString());
        }

        return sb.ToString();
    }

    public static string Unescape(string field)
    {
        if (!field.Contains('\\', StringComparison.Ordinal))
        {
            return field;
        }

        var sb = new StringBuilder(field.Length);
        for (var i = 0; i < field.Length; i++)
        {
            if (field[i] != '\\' || i + 1 == field.Length)
            {
                sb.Append(field[i]);
                continue;
            }

            sb.Append(field[++i] switch
            {
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                var other => other,
            });
        }

        return sb.ToString();
    }
}
