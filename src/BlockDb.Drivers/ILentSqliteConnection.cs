namespace BlockDb.Drivers;

/// <summary>
/// A caller's open connection lent to BlockDb (<c>MicrosoftDataDriver.Borrow</c>), as BlockDb's engine sees it when
/// <c>BlockDatabaseBuilder.UseCallerConnection</c> receives it: the caller owns the connection and its transaction,
/// BlockDb runs statements inside that transaction and never begins, commits or rolls one back (X1, docs/ARCHITECTURE.md).
/// Internal: only BlockDb's own drivers lend connections.
/// </summary>
internal interface ILentSqliteConnection : ISqliteConnection
{
    /// <summary>The driver whose connection this is (its name is the provider BlockDb reports).</summary>
    ISqliteDriver Driver { get; }

    /// <summary>Whether the caller's connection is still open and this loan not disposed.</summary>
    bool IsOpen { get; }
}
