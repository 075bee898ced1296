namespace BlockDb;

/// <summary>
/// Whether the <see cref="BlockLayout.KeyMap"/> layout persists its key map beside the database file, so the first
/// lookup after the next open reads the map's file instead of scanning the whole <c>Block</c> table
/// (<see cref="IndexOptions.KeyMapFile"/>).
/// </summary>
public enum KeyMapFileMode
{
    /// <summary>
    /// Default. Disposing a read-write database whose key map was loaded writes the map to
    /// <c>&lt;DataSource&gt;-blockdb-keymap</c> (a temporary file in the same folder, then renamed over the old one;
    /// 12.5 bytes per block after a load, up to about 19 after the map grew, written at disk speed: about 3 s for 100
    /// million blocks), after committing a new token into the
    /// file's <c>BlockDbSettings</c>; the first use of the map after the next open loads it when it provably belongs
    /// to the database as it is now, and else reads the <c>Block</c> table as before (logged with the reason). A
    /// failure to write is logged and never fails the dispose. A read-only database uses the file but never writes it.
    /// </summary>
    OnDispose = 0,

    /// <summary>No key map file is read or written: every open's first lookup reads the whole <c>Block</c> table.</summary>
    Off = 1,
}
