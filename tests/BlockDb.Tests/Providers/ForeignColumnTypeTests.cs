using BlockDb.Opening;
using Microsoft.Data.Sqlite;

namespace BlockDb.Tests.Providers;

/// <summary>
/// A block row whose <c>Hash</c> another writer replaced by a number or a text of another storage class than the layout's
/// (SQLite's columns take any type) is read the same way by every SQLite provider, as SQLite converts it
/// (<see href="https://www.sqlite.org/c3ref/column_blob.html"/>), or refused with a <see cref="BlockDbException"/> when it
/// is no hash: never an untyped <see cref="InvalidCastException"/>.
/// </summary>
public sealed class ForeignColumnTypeTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Cases =>
        from provider in ProviderCatalog.SqliteNames
        from layout in new[] { BlockLayout.TextHash, BlockLayout.BlobHash }
        select new object[] { provider, layout };

    public static IEnumerable<object[]> CasesWithValues =>
        from pair in Cases
        from value in new[] { ("12345", "12345"), ("'abc'", "abc") }
        select new object[] { pair[0], pair[1], value.Item1, value.Item2 };

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(CasesWithValues))]
    public async Task A_hash_stored_as_an_integer_or_a_text_reads_as_its_text_bytes_or_is_refused_as_a_format_error_on_every_provider(string provider, BlockLayout layout, string literal, string text)
    {
        var (options, id, blockset) = await IndexWithForeignHashAsync(provider, layout, literal);
        await using var db = BlockDatabase.Open(options);
        await using var session = await db.OpenSessionAsync();
        if (layout == BlockLayout.BlobHash)
        {
            // SQLite gives an integer's or a text's bytes for a BLOB read: every provider reads them as the hash.
            var bytes = System.Text.Encoding.UTF8.GetBytes(text);
            Assert.Equal(bytes, (await session.GetBlockAsync(id)).Block.Hash.Bytes.ToArray());
            Assert.Equal(bytes, Assert.Single(await session.ListBlocksetBlocksAsync(blockset)).Block.Hash.Bytes.ToArray());
        }
        else
        {
            // The text is not a hash's base64: a typed format error on every provider, never InvalidCastException.
            await Assert.ThrowsAsync<BlockDbFormatException>(async () => await session.GetBlockAsync(id));
            await Assert.ThrowsAsync<BlockDbFormatException>(async () => await session.ListBlocksetBlocksAsync(blockset));
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task A_hash_stored_as_a_real_number_reads_as_its_text_bytes_or_is_refused_with_a_BlockDbException(string provider, BlockLayout layout)
    {
        var (options, id, _) = await IndexWithForeignHashAsync(provider, layout, "2.5");
        await using var db = BlockDatabase.Open(options);
        await using var session = await db.OpenSessionAsync();
        var error = await Record.ExceptionAsync(async () => Assert.Equal("2.5"u8.ToArray(), (await session.GetBlockAsync(id)).Block.Hash.Bytes.ToArray()));
        Assert.True(error is null or BlockDbException, $"{error?.GetType().Name}: {error?.Message}");
    }

    /// <summary>An index with one block in one blockset, whose <c>Hash</c> another writer then set to <paramref name="number"/> (SQL literal).</summary>
    private async Task<(BlockDbOptions Options, long Id, long Blockset)> IndexWithForeignHashAsync(string provider, BlockLayout layout, string number)
    {
        var path = _folder.File($"{provider}-{layout}.db");
        var options = new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout } };
        long id, blockset;
        await using (var db = BlockDatabase.Open(options))
        await using (var session = await db.OpenSessionAsync())
        {
            id = (await session.SelectXorInsertAsync(TestData.Block(1, 10))).Id;
            blockset = await session.AddBlocksetAsync(new[] { TestData.Block(1, 10) }, new SelectXorInsertResult[1]);
        }

        using (var other = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false }.ToString()))
        {
            other.Open();
            using var update = other.CreateCommand();
            update.CommandText = $"""UPDATE "Block" SET "Hash" = {number} WHERE "ID" = $id""";
            update.Parameters.AddWithValue("$id", id);
            Assert.Equal(1, update.ExecuteNonQuery());
        }

        return (options, id, blockset);
    }
}
