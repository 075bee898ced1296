namespace BlockDb.Drivers.Native;

/// <summary>
/// Tells, from one SQL statement's text, whether it controls a transaction. A borrowed connection (the caller owns the
/// transaction) refuses <see cref="StatementKind.Transaction"/> outright and runs <see cref="StatementKind.Savepoint"/>
/// only inside the caller's open transaction, where a savepoint nests and its release commits nothing (invariant X1,
/// docs/ARCHITECTURE.md). SQLite's grammar puts these keywords first
/// (<see href="https://www.sqlite.org/lang_transaction.html"/>, <see href="https://www.sqlite.org/lang_savepoint.html"/>),
/// so reading past whitespace and comments to the first words is enough.
/// </summary>
internal static class TransactionStatements
{
    public enum StatementKind
    {
        /// <summary>Neither: runs in whatever transaction is open.</summary>
        Other,

        /// <summary><c>BEGIN</c>, <c>COMMIT</c>, <c>END</c>, or <c>ROLLBACK</c> without <c>TO</c>: starts or ends a transaction.</summary>
        Transaction,

        /// <summary><c>SAVEPOINT</c>, <c>RELEASE</c>, or <c>ROLLBACK TO</c>: outside a transaction <c>SAVEPOINT</c> would begin one.</summary>
        Savepoint,
    }

    /// <summary>The kind of the statement <paramref name="sql"/> starts with.</summary>
    public static StatementKind Classify(ReadOnlySpan<char> sql)
    {
        var rest = sql;
        var word = NextWord(ref rest);
        if (Is(word, "BEGIN") || Is(word, "COMMIT") || Is(word, "END"))
        {
            return StatementKind.Transaction;
        }

        if (Is(word, "SAVEPOINT") || Is(word, "RELEASE"))
        {
            return StatementKind.Savepoint;
        }

        if (!Is(word, "ROLLBACK"))
        {
            return StatementKind.Other;
        }

        // ROLLBACK [TRANSACTION] [TO [SAVEPOINT] name]
        word = NextWord(ref rest);
        if (Is(word, "TRANSACTION"))
        {
            word = NextWord(ref rest);
        }

        return Is(word, "TO") ? StatementKind.Savepoint : StatementKind.Transaction;
    }

    /// <summary>A message for a refused statement.</summary>
    public static string Refusal(string sql) =>
        $"'{sql}' was refused: on a borrowed connection the transaction is the caller's, and BlockDb never runs BEGIN, COMMIT, END or ROLLBACK on it (only its own SAVEPOINT, RELEASE and ROLLBACK TO, inside the caller's transaction).";

    /// <summary>A message for a savepoint statement run while the caller has no transaction open.</summary>
    public static string OutsideTransaction(string sql) =>
        $"'{sql}' was refused: the caller has no transaction open on the borrowed connection, and a savepoint there would begin one (and its release commit it). Begin the transaction first.";

    private static bool Is(ReadOnlySpan<char> word, string keyword) => word.Equals(keyword, StringComparison.OrdinalIgnoreCase);

    /// <summary>Skips whitespace, <c>--</c> and <c>/* */</c> comments, then returns the letters that follow (empty when none).</summary>
    private static ReadOnlySpan<char> NextWord(ref ReadOnlySpan<char> rest)
    {
        while (true)
        {
            rest = rest.TrimStart();
            if (rest.StartsWith("--"))
            {
                var end = rest.IndexOf('\n');
                rest = end < 0 ? [] : rest[(end + 1)..];
            }
            else if (rest.StartsWith("/*"))
            {
                var end = rest[2..].IndexOf("*/");
                rest = end < 0 ? [] : rest[(end + 4)..];
            }
            else
            {
                break;
            }
        }

        var length = 0;
        while (length < rest.Length && char.IsAsciiLetter(rest[length]))
        {
            length++;
        }

        var word = rest[..length];
        rest = rest[length..];
        return word;
    }
}
