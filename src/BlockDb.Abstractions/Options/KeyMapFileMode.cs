namespace BlockDb;

/// <summary>
/// Whether the <see cref="BlockLayout.KeyMap"/> layout persists its key map beside the database file, so the first
/// lookup after the next open reads the map's file instead of scanning the whole <c>Block</c> table
/// (<see cref="IndexOptions.KeyMapFile"/>).
/// </summary>
public enum KeyMapFileMode
{
    /// <summary>
    /// Default. Disposing a read-write database writes its loaded map to <c>&lt;DataSource&gt;-blockdb-keymap</c> (about
    /// 12.5 to 19 bytes per block); the next open loads it when it provably belongs to the database as it is, else reads
    /// the table (logged with the reason). A failed write is logged and never fails the dispose; a read-only database
    /// reads the file and never writes it.
    /// </summary>
    OnDispose = 0,

    /// <summary>No key map file is read or written: every open's first lookup reads the whole <c>Block</c> table.</summary>
    Off = 1,
}
