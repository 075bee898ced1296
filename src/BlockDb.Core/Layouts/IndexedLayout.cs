using BlockDb.Drivers;
using BlockDb.Engine;
using BlockDb.Layouts.Indexed;
using BlockDb.Sql;
using BlockDb.Sqlite;
using Microsoft.Extensions.Logging;

namespace BlockDb.Layouts;

/// <summary>
/// The layouts that find blocks through SQLite's unique (Hash, Size) index, differing only in how a hash is stored
/// (<typeparamref name="TCodec"/>). They keep no state per database, so a definition is its own state.
/// </summary>
internal abstract class IndexedLayout<TCodec> : LayoutDefinition
    where TCodec : struct, IHashCodec
{
    private readonly State _state;

    protected IndexedLayout() => _state = new State(this);

    /// <inheritdoc />
    public override IEnumerable<string> CreateSchema() =>
        [BlockDbSql.BlockTable(TextHashes ? "TEXT" : "BLOB"), BlockDbSql.BlockHashIndex, .. BlockDbSql.BlocksetTables, .. BlockDbSql.VolumeTables];

    /// <inheritdoc />
    public override LayoutState Open(BlockDbOptions options, ISqliteConnection connection, string path, ILogger logger) => _state;

    private sealed class State(IndexedLayout<TCodec> definition) : LayoutState
    {
        public override LayoutDefinition Definition => definition;

        public override ISessionHandle OpenSession(SqliteServices s) => s.Settings.Strategy switch
        {
            SelectXorInsertStrategy.InsertOrIgnoreThenSelect => s.Open(new IndexedSession<TCodec, InsertOrIgnoreThenSelect>(s.Connection, s.Transaction, s.VolumeGuard)),
            SelectXorInsertStrategy.InsertReturningThenSelect => s.Open(new IndexedSession<TCodec, InsertReturningThenSelect>(s.Connection, s.Transaction, s.VolumeGuard)),
            _ => s.Open(new IndexedSession<TCodec, SelectThenInsert>(s.Connection, s.Transaction, s.VolumeGuard)),
        };
    }
}
