namespace BlockDb.Backup.Walking;

/// <summary>A regular file found by the walker, with its size at the time.</summary>
internal readonly record struct WalkedFile(string Path, long Length);
