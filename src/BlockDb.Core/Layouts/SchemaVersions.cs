namespace BlockDb.Layouts;

/// <summary>
/// The schema versions BlockDb has written, in <c>PRAGMA user_version</c>. Every layout writes <see cref="Current"/>;
/// older files are upgraded in place on their first read-write open.
/// </summary>
internal static class SchemaVersions
{
    /// <summary>1: Duplicati's schema, <see cref="BlockLayout.TextHash"/> only, no settings table.</summary>
    public const int TextHashOnly = 1;

    /// <summary>2: a <c>BlockDbSettings</c> table names the layout (<see cref="BlockLayout.BlobHash"/>, <see cref="BlockLayout.KeyMap"/> without guards).</summary>
    public const int NamedLayout = 2;

    /// <summary>3: the first KeyMap guards.</summary>
    public const int KeyMapGuards = 3;

    /// <summary>4: the KeyMap guards that refuse foreign triggers, rowid moves and bad sizes.</summary>
    public const int StrictKeyMapGuards = 4;

    /// <summary>5: remote volumes (<c>Remotevolume</c>, <c>Block.VolumeID</c>) for every layout, and the layout named in every file.</summary>
    public const int Volumes = 5;

    /// <summary>The version this build writes.</summary>
    public const int Current = Volumes;

    /// <summary>The oldest version this build reads.</summary>
    public const int Oldest = TextHashOnly;
}
