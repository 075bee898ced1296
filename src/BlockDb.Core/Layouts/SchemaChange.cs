namespace BlockDb.Layouts;

/// <summary>What a file needs before it can be used.</summary>
internal enum SchemaChange
{
    /// <summary>Nothing: use it as it is.</summary>
    None,

    /// <summary>An empty file: create the schema.</summary>
    Create,

    /// <summary>An older schema version of the layout: upgrade it in place.</summary>
    Upgrade,

    /// <summary>Guards removed or changed by SQL outside BlockDb: re-create them.</summary>
    RestoreGuards,
}
