using Npgsql;
using NpgsqlTypes;

namespace BlockDb.PostgreSql;

/// <summary>Commands and parameters of the index's statements, shared by the block, blockset, volume and collection operations.</summary>
internal static class PgCommands
{
    /// <summary>Binds the hashes and sizes of many blocks as <c>$1</c> (<c>bytea[]</c>) and <c>$2</c> (<c>bigint[]</c>).</summary>
    public static void AddKeys(NpgsqlParameterCollection parameters, byte[][] hashes, long[] sizes)
    {
        parameters.Add(new NpgsqlParameter<byte[][]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bytea, TypedValue = hashes });
        parameters.Add(new NpgsqlParameter<long[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = sizes });
    }

    /// <summary>Each block's volume (<c>bigint[]</c>, NULL elements: none), beside <see cref="AddKeys"/>.</summary>
    public static NpgsqlParameter VolumeIds(long?[] volumes) =>
        new NpgsqlParameter<long?[]> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Bigint, TypedValue = volumes };

    /// <summary>Each block's blockset number (<c>int[]</c>, NULL elements: none; a null array: no blockset), beside <see cref="AddKeys"/>.</summary>
    public static NpgsqlParameter BlocksetNumbers(int?[]? numbers) =>
        new NpgsqlParameter<int?[]?> { NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.Integer, TypedValue = numbers };

    /// <summary>The same volume (or none) for each of <paramref name="count"/> blocks.</summary>
    public static NpgsqlParameter VolumeIds(long? volumeId, int count)
    {
        var volumes = new long?[count];
        Array.Fill(volumes, volumeId);
        return VolumeIds(volumes);
    }

    /// <summary>Binds a block's hash and size as <c>$1</c> and <c>$2</c>.</summary>
    public static NpgsqlBatchCommand BatchCommand(string sql, byte[] hash, long size)
    {
        var command = new NpgsqlBatchCommand(sql);
        command.Parameters.Add(new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = hash });
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = size });
        return command;
    }

    public static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, byte[] hash, long size)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.Add(new NpgsqlParameter<byte[]> { NpgsqlDbType = NpgsqlDbType.Bytea, TypedValue = hash });
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = size });
        return command;
    }

    public static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, long id)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.Add(new NpgsqlParameter<long> { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = id });
        return command;
    }

    /// <summary>Runs <paramref name="body"/> in the caller's transaction, or in one of its own committed at the end (rolled back on any failure).</summary>
    public static async Task<T> InTransactionAsync<T>(NpgsqlConnection connection, NpgsqlTransaction? transaction, Func<NpgsqlTransaction, CancellationToken, Task<T>> body, CancellationToken cancellationToken)
    {
        if (transaction is not null)
        {
            return await body(transaction, cancellationToken).ConfigureAwait(false);
        }

        var own = await connection.BeginTransactionAsync(cancellationToken).ConfigureAwait(false);
        await using var ownScope = own.ConfigureAwait(false);
        var result = await body(own, cancellationToken).ConfigureAwait(false);
        await own.CommitAsync(CancellationToken.None).ConfigureAwait(false);
        return result;
    }

    public static NpgsqlCommand Command(string sql, NpgsqlConnection connection, NpgsqlTransaction? transaction, params NpgsqlParameter[] parameters)
    {
        var command = new NpgsqlCommand(sql, connection, transaction);
        command.Parameters.AddRange(parameters);
        return command;
    }

    public static NpgsqlParameter<long> Id(long value) => new() { NpgsqlDbType = NpgsqlDbType.Bigint, TypedValue = value };

    public static NpgsqlParameter<string> Text(string value) => new() { NpgsqlDbType = NpgsqlDbType.Text, TypedValue = value };
}
