namespace BlockDb.Drivers.Native;

/// <summary>
/// The checks every native binding makes when it prepares a statement: the text holds exactly one SQL statement, and
/// the parameter names SQLite found are the ones <see cref="SqlStatement.Parameters"/> declares, in that order.
/// </summary>
internal static class PreparedText
{
    /// <summary>
    /// Prepares one statement from the start of <c>rest</c> only to learn whether there is one: returns SQLite's code,
    /// whether a statement was found (the probe finalizes it), and how many bytes SQLite consumed.
    /// </summary>
    public delegate int Probe(ReadOnlySpan<byte> rest, out bool found, out int consumed);

    public static BlockDbException NoStatement(string context) => new($"{context}: the SQL text holds no statement.");

    /// <summary>Throws when <paramref name="rest"/> (the text after the first statement) holds another statement; whitespace, comments and semicolons are fine.</summary>
    public static void CheckNoMoreStatements(ReadOnlySpan<byte> rest, Probe probe, string context)
    {
        while (!rest.Trim(" \t\r\n\f\v"u8).IsEmpty)
        {
            var rc = probe(rest, out var found, out var consumed);
            if (rc != SqliteCodes.Ok || found)
            {
                throw new BlockDbException($"{context}: the SQL text holds more than one statement; only one is allowed.");
            }

            if (consumed <= 0)
            {
                return;
            }

            rest = rest[consumed..];
        }
    }

    /// <summary>Throws unless SQLite's <paramref name="count"/> parameters are named, in order, as <paramref name="statement"/> declares.</summary>
    /// <param name="count">SQLite's <c>sqlite3_bind_parameter_count</c>.</param>
    /// <param name="nameAt">SQLite's <c>sqlite3_bind_parameter_name</c> for a 1-based index.</param>
    /// <param name="statement">The statement prepared.</param>
    /// <param name="context">What is being prepared, for the message.</param>
    public static void CheckParameters(int count, Func<int, string?> nameAt, SqlStatement statement, string context)
    {
        var expected = statement.Parameters;
        if (count != expected.Count)
        {
            throw new BlockDbException(
                $"{context}: SQLite counts {count} parameter(s) in the SQL text but the statement declares {expected.Count} ({string.Join(", ", expected)}).");
        }

        for (var i = 1; i <= count; i++)
        {
            var actual = nameAt(i);
            if (!string.Equals(actual, expected[i - 1], StringComparison.Ordinal))
            {
                throw new BlockDbException(
                    $"{context}: parameter {i} is '{actual ?? "?"}' in the SQL text but '{expected[i - 1]}' in the statement's parameter list.");
            }
        }
    }
}
