namespace BlockDb.Sqlite;

/// <summary>An open enumeration the database disposes with itself.</summary>
internal interface IReadCursor : IAsyncDisposable, IDisposable;
