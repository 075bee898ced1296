using Microsoft.Extensions.Configuration;
using static BlockDb.Tests.ErrorMessages.HugeInput;

namespace BlockDb.Tests.ErrorMessages;

/// <summary>
/// A huge value in a setting, a path or a parsed hash gives a short error message; and the one formatter that quotes
/// every such value (<see cref="Quoted"/>) cuts, escapes and never splits a character.
/// </summary>
public sealed class HugeInputTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    [Fact]
    public void A_huge_provider_name_data_source_setting_name_or_enum_value_gives_a_short_message()
    {
        AssertShort(Assert.Throws<BlockDbConfigurationException>(() => Bind(("Provider", Huge), ("DataSource", _folder.File("a.db")))));
        AssertShort(Assert.Throws<BlockDbConfigurationException>(() => Bind(("Provider", "PInvoke"), ("DataSource", "file:" + Huge))), Quoted.MaxPathCharacters + MaxMessage);
        AssertShort(Assert.Throws<BlockDbConfigurationException>(() => Bind(("Provider", "PInvoke"), ("DataSource", _folder.File("a.db")), ("Pragmas:JournalMode", Huge))));
        AssertShort(Assert.Throws<BlockDbConfigurationException>(() => Bind(("Provider", "PInvoke"), ("DataSource", _folder.File("a.db")), ("Pragmas:" + Huge, "1"))));
    }

    [Theory]
    [MemberData(nameof(ConformanceTestBase.Matrix), MemberType = typeof(ConformanceTestBase))]
    public void Opening_a_huge_path_gives_a_short_message(string provider, BlockLayout layout)
    {
        // The path is quoted up to 4,096 characters (PATH_MAX), the folder as well.
        const int max = (2 * Quoted.MaxPathCharacters) + MaxMessage;
        foreach (var path in new[] { Path.Combine(_folder.Path, "missing", Huge), Path.Combine(_folder.Path, Huge) })
        {
            var e = Assert.ThrowsAny<BlockDbException>(() => BlockDatabase.Open(new BlockDbOptions { Provider = provider, DataSource = path, Index = { Layout = layout } }));
            AssertShort(e, max);
            Assert.Equal(SqliteResultCode.CantOpen, e.SqliteErrorCode);
        }
    }

    [Fact]
    public void A_huge_hash_text_gives_a_short_message()
    {
        AssertShort(Assert.Throws<ArgumentException>(() => BlockHash.Parse(Huge)));
        AssertShort(Assert.Throws<ArgumentException>(() => BlockKey.Parse(Huge, 1)));
        AssertShort(Assert.Throws<ArgumentException>(() => BlockHash.Decode(Huge + "=", new byte[BlockHash.MaxBytes])));
    }

    [PostgresFact]
    public void A_huge_postgresql_connection_string_gives_a_short_message()
    {
        AssertShort(Assert.Throws<BlockDbConfigurationException>(() => Bind(("Provider", "PostgreSql"), ("ConnectionString", Huge + "=1"))));
    }

    [Fact]
    public void The_formatter_cuts_the_middle_escapes_what_does_not_print_and_never_splits_a_pair()
    {
        Assert.Equal("null", Quoted.Value(null));
        Assert.Equal("''", Quoted.Value(string.Empty));
        Assert.Equal("'b-1.zip'", Quoted.Value("b-1.zip"));
        Assert.Equal("'a\\u0000b\\u001B\\u007F\\u0085\\u200E\\u2028\\uD800c\\uDFFF'", Quoted.Value("a\0b\u001B\u007F\u0085\u200E\u2028\uD800c\uDFFF"));
        Assert.Equal("'\uD83D\uDE00 \\U000E0001'", Quoted.Value("\uD83D\uDE00 \U000E0001"));

        var cut = Quoted.Value(new string('x', 63) + "\uD83D\uDE00" + new string('y', 1000) + "\uD83D\uDE00" + new string('z', 31));
        Assert.Equal("'" + new string('x', 63) + "…" + new string('z', 31) + "'", cut);
        Assert.Equal(Quoted.MaxValueCharacters + 3, Quoted.Value(Huge).Length);
        Assert.Equal(Quoted.MaxPathCharacters + 3, Quoted.Path(Huge).Length);
        Assert.Equal("'" + new string('A', 96) + "'", Quoted.Value(new string('A', 96)));
    }

    private static BlockDbOptions Bind(params (string Key, string Value)[] settings) =>
        BlockDbConfiguration.Bind(new ConfigurationBuilder()
            .AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>($"BlockDb:{s.Key}", s.Value)))
            .Build());
}
