namespace BlockDb.Drivers;

/// <summary>
/// One SQL statement with its named parameters in index order. The engine keeps its SQL text once and every provider
/// prepares the same text; a driver may check the parameter names against the statement it prepared.
/// </summary>
public sealed class SqlStatement
{
    /// <summary>Creates a statement.</summary>
    /// <param name="name">A short name for errors and logs, for example <c>FindBlock</c>.</param>
    /// <param name="text">Exactly one SQL statement.</param>
    /// <param name="parameters">Its parameter names with their prefix (<c>@Hash</c>), in the order SQLite numbers them (first appearance), so parameter <c>i</c> is <c>parameters[i - 1]</c>.</param>
    public SqlStatement(string name, string text, params string[] parameters)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentException.ThrowIfNullOrWhiteSpace(text);
        ArgumentNullException.ThrowIfNull(parameters);
        Name = name;
        Text = text;
        Parameters = parameters;
    }

    /// <summary>A short name for errors and logs.</summary>
    public string Name { get; }

    /// <summary>The SQL text.</summary>
    public string Text { get; }

    /// <summary>The parameter names, in index order (index 1 first).</summary>
    public IReadOnlyList<string> Parameters { get; }

    /// <inheritdoc />
    public override string ToString() => Name;
}
