using BlockDb.Drivers;
using BlockDb.Layouts.Indexed;
using BlockDb.Sql;
using BlockDb.Sqlite;
using BlockDb.Volumes;
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

        public override IBlockStore CreateStore(ISqliteConnection connection, SqliteTransaction batch, VolumeGuard volumes, SelectXorInsertStrategy strategy) => strategy switch
        {
            SelectXorInsertStrategy.InsertOrIgnoreThenSelect => new IndexedBlockStore<TCodec, InsertOrIgnoreThenSelect>(connection, batch, volumes),
            SelectXorInsertStrategy.InsertReturningThenSelect => new IndexedBlockStore<TCodec, InsertReturningThenSelect>(connection, batch, volumes),
            _ => new IndexedBlockStore<TCodec, SelectThenInsert>(connection, batch, volumes),
        };
    }
}
