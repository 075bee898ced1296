using System.Text;
using BlockDb.Drivers;
using BlockDb.Layouts;
using BlockDb.Sql;

namespace BlockDb.Conversion;

/// <summary>
/// A table of another application carried by a conversion: its own <c>CREATE</c> text, and the statements that read its
/// rows from the source and write them, at the same rowid, into the new file. Each value is read with its storage class
/// (<c>typeof()</c>) and written back in it: integers and REALs as themselves, BLOBs as bytes, text as its bytes cast back
/// to TEXT (so text that is not valid UTF-8 is kept byte for byte). Each storage class has a result column and a
/// parameter of its own, which holds that class or NULL: an ADO.NET provider may fix a column's or a parameter's type
/// on first use (System.Data.SQLite does). Generated columns are not written (SQLite computes them).
/// </summary>
/// <param name="Name">The table's name.</param>
/// <param name="Sql">Its <c>CREATE TABLE</c> text, from <c>sqlite_schema</c>.</param>
/// <param name="Columns">The columns written (generated ones excluded), in order.</param>
/// <param name="Rowid">The name that reads the rowid (<c>rowid</c>, <c>_rowid_</c> or <c>oid</c>, whichever no column shadows), or <see langword="null"/> for a <c>WITHOUT ROWID</c> table.</param>
/// <param name="Sequence">Its <c>AUTOINCREMENT</c> counter in the source, or <see langword="null"/> when it has none.</param>
internal sealed record ForeignTable(string Name, string Sql, IReadOnlyList<string> Columns, string? Rowid, long? Sequence)
{
    private static readonly string[] RowidNames = ["rowid", "_rowid_", "oid"];

    /// <summary>The rows, in rowid order: the rowid (when the table has one), then per column its storage class (<see cref="ForeignSchema.Null"/> ...), its value if an integer, if a REAL, and if text or a BLOB (as a BLOB of its bytes).</summary>
    public SqlStatement Select
    {
        get
        {
            var text = new StringBuilder("SELECT ");
            if (Rowid is not null)
            {
                text.Append(ForeignSchema.Identifier(Rowid)).Append(", ");
            }

            text.AppendJoin(", ", Columns.Select(c =>
            {
                var column = ForeignSchema.Identifier(c);
                return $"CASE typeof({column}) WHEN 'null' THEN {ForeignSchema.Null} WHEN 'integer' THEN {ForeignSchema.Integer} WHEN 'real' THEN {ForeignSchema.Real} WHEN 'text' THEN {ForeignSchema.Text} ELSE {ForeignSchema.Blob} END, "
                    + $"CASE WHEN typeof({column}) = 'integer' THEN {column} END, CASE WHEN typeof({column}) = 'real' THEN {column} END, CASE WHEN typeof({column}) IN ('text', 'blob') THEN CAST({column} AS BLOB) END";
            }));
            text.Append(" FROM main.").Append(ForeignSchema.Identifier(Name));
            if (Rowid is not null)
            {
                text.Append(" ORDER BY ").Append(ForeignSchema.Identifier(Rowid));
            }

            return new SqlStatement("CarryRowsOut", text.ToString());
        }
    }

    /// <summary>Writes one row: <c>@rowid</c> (when the table has one), then per column <c>@kN</c> (its storage class) and the value in the parameter of that class: <c>@iN</c>, <c>@rN</c>, or <c>@bN</c> (text and BLOBs as bytes).</summary>
    public SqlStatement Insert
    {
        get
        {
            var parameters = new List<string>();
            var names = new List<string>();
            var values = new List<string>();
            if (Rowid is not null)
            {
                parameters.Add("@rowid");
                names.Add(ForeignSchema.Identifier(Rowid));
                values.Add("@rowid");
            }

            for (var i = 0; i < Columns.Count; i++)
            {
                parameters.AddRange([$"@k{i}", $"@i{i}", $"@r{i}", $"@b{i}"]);
                names.Add(ForeignSchema.Identifier(Columns[i]));
                values.Add($"CASE @k{i} WHEN {ForeignSchema.Integer} THEN @i{i} WHEN {ForeignSchema.Real} THEN @r{i} WHEN {ForeignSchema.Text} THEN CAST(@b{i} AS TEXT) WHEN {ForeignSchema.Blob} THEN @b{i} END");
            }

            return new SqlStatement(
                "CarryRowIn",
                $"INSERT INTO main.{ForeignSchema.Identifier(Name)} ({string.Join(", ", names)}) VALUES ({string.Join(", ", values)})",
                [.. parameters]);
        }
    }

    /// <summary>Counts the rows, for progress.</summary>
    public SqlStatement Count => new("CarryCount", $"SELECT COUNT(*) FROM main.{ForeignSchema.Identifier(Name)}");

    /// <summary>Writes one row read by <see cref="Select"/> with <see cref="Insert"/>, each value in its storage class.</summary>
    /// <param name="row">The source's <see cref="Select"/>, on a row.</param>
    /// <param name="insert">The target's <see cref="Insert"/>.</param>
    /// <param name="buffer">Holds a TEXT or BLOB value on its way; replaced by a larger one when a value does not fit.</param>
    /// <returns>Always <see langword="true"/>: every row is copied.</returns>
    public bool CopyRow(ISqliteStatement row, ISqliteStatement insert, ref byte[] buffer)
    {
        var column = 0;
        var parameter = 1;
        if (Rowid is not null)
        {
            insert.BindInt64(parameter++, row.ColumnInt64(column++));
        }

        for (var i = 0; i < Columns.Count; i++, parameter += 4, column += 4)
        {
            // Only the parameter of the value's class is bound; the others keep an earlier row's value, which the CASE
            // of the insert does not read.
            var kind = row.ColumnInt64(column);
            insert.BindInt64(parameter, kind);
            switch (kind)
            {
                case ForeignSchema.Integer:
                    insert.BindInt64(parameter + 1, row.ColumnInt64(column + 1));
                    break;
                case ForeignSchema.Real:
                    insert.BindDouble(parameter + 2, row.ColumnDouble(column + 2));
                    break;
                case ForeignSchema.Text or ForeignSchema.Blob:
                    var length = row.ColumnBlob(column + 3, buffer);
                    if (length > buffer.Length)
                    {
                        buffer = new byte[Math.Max(length, buffer.Length * 2)];
                        row.ColumnBlob(column + 3, buffer);
                    }

                    insert.BindBlob(parameter + 3, buffer.AsSpan(0, length));
                    break;
            }
        }

        insert.ExecuteNonQuery();
        return true;
    }

    /// <summary>Reads what carrying <paramref name="name"/> needs from the source; refuses a rowid the columns hide.</summary>
    /// <exception cref="BlockDbConflictException">Columns named <c>rowid</c>, <c>_rowid_</c> and <c>oid</c> hide the rowid of a rowid table.</exception>
    public static ForeignTable Read(ISqliteConnection source, string name, string sql, long? sequence, string what, LayoutDefinition to)
    {
        var columns = ForeignSchema.Columns(source, name);
        bool withoutRowid;
        using (var kind = source.Prepare(BlockDbSql.CarryWithoutRowid))
        {
            kind.BindText(1, name);
            withoutRowid = kind.Step() && kind.ColumnInt64(0) == 1;
        }

        string? rowid = null;
        if (!withoutRowid)
        {
            rowid = RowidNames.FirstOrDefault(r => !columns.Any(c => string.Equals(c.Name, r, StringComparison.OrdinalIgnoreCase)))
                ?? throw ForeignSchema.Refused(what, "columns named rowid, _rowid_ and oid hide its rowid, which a copy would then renumber", "Rename one of those columns before converting", to);
        }

        return new ForeignTable(name, sql, [.. columns.Where(c => c.Hidden == 0).Select(c => c.Name)], rowid, sequence);
    }
}
