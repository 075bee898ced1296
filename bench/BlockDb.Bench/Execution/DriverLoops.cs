using BlockDb.Bench.Data;
using BlockDb.Bench.Model;
using BlockDb.Drivers;
using BlockDb.Sql;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The floor under the engine: the provider's <see cref="ISqliteStatement"/>s driven directly with the same
/// SQL (BlockDbSql) and the same batching as the engine (BEGIN IMMEDIATE, COMMIT every <c>batch</c> writes),
/// but no argument validation, no call guard and no ValueTask. The difference to the sync path is the cost
/// of BlockDb's engine layer.
/// </summary>
internal sealed class DriverLoops : IDisposable
{
    private readonly ISqliteConnection _connection;
    private readonly ISqliteStatement _find;
    private readonly ISqliteStatement _insert;
    private readonly ISqliteStatement _begin;
    private readonly ISqliteStatement _commit;
    private readonly int _batch;
    private bool _open;
    private int _pending;

    public DriverLoops(ISqliteConnection connection, int batch)
    {
        _connection = connection;
        _find = connection.Prepare(BlockDbSql.FindBlock);
        _insert = connection.Prepare(BlockDbSql.InsertBlock);
        _begin = connection.Prepare(BlockDbSql.Begin);
        _commit = connection.Prepare(BlockDbSql.Commit);
        _batch = batch;
    }

    public Tally Run(Workload workload, BlockStream d, int from, int to, LatencyRecorder r)
    {
        var hashes = d.Hashes;
        var sizes = d.Sizes;
        var digest = new Fnv64();
        long created = 0;
        r.Start();
        for (var i = from; i < to; i++)
        {
            switch (workload)
            {
                case Workload.Select:
                    digest.Add(Find(hashes[i], sizes[i]));
                    break;
                case Workload.Insert:
                    digest.Add(Insert(hashes[i], sizes[i]));
                    created++;
                    break;
                case Workload.XorSelectInsert:
                    var id = Find(hashes[i], sizes[i]);
                    var isNew = id < 0;
                    digest.Add(isNew ? id = Insert(hashes[i], sizes[i]) : id);
                    digest.Add(isNew ? 1 : 0);
                    created += isNew ? 1 : 0;
                    break;
                default:
                    throw new NotSupportedException($"The driver path covers select, insert and xor-select-insert, not {WorkloadInfo.Name(workload)}.");
            }

            r.Tick();
        }

        Commit();
        r.Stop();
        return new Tally(to - from, 0, created, digest.Value);
    }

    public void Dispose()
    {
        Commit();
        _find.Dispose();
        _insert.Dispose();
        _begin.Dispose();
        _commit.Dispose();
    }

    private long Find(string hash, long size)
    {
        _find.BindText(1, hash);
        _find.BindInt64(2, size);
        var id = _find.Step() ? _find.ColumnInt64(0) : -1;
        _find.Reset();
        return id;
    }

    private long Insert(string hash, long size)
    {
        if (!_open)
        {
            _begin.ExecuteNonQuery();
            _open = true;
        }

        _insert.BindText(1, hash);
        _insert.BindInt64(2, size);
        _insert.ExecuteNonQuery();
        var id = _connection.LastInsertRowId;
        if (_batch > 0 && ++_pending >= _batch)
        {
            Commit();
        }

        return id;
    }

    private void Commit()
    {
        if (_open)
        {
            _commit.ExecuteNonQuery();
            _open = false;
            _pending = 0;
        }
    }
}
