namespace BlockDb.Tests.Configuration;

/// <summary>
/// Settings applied to a SQLite file, for every provider and layout: the recommended pragmas are applied and read back,
/// the SQLite-defaults preset leaves SQLite's own values, a single pragma overrides its preset, and invalid options name
/// the setting and what is allowed.
/// </summary>
public sealed class PragmaAndOptionTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Recommended_pragmas_are_applied_and_read_back(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o => o.Pragmas.Preset = PragmaPreset.Recommended);
        await using var session = await db.OpenSessionAsync(); // its connection is checked against the same values
        Assert.Equal(PragmaSettings.Recommended, ((ISqliteBlockDatabase)db).AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task The_sqlite_defaults_preset_really_leaves_wal(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using (var wal = Open(o => o.Pragmas.Preset = PragmaPreset.Recommended))
        {
            Assert.Equal(JournalMode.Wal, ((ISqliteBlockDatabase)wal).AppliedPragmas.JournalMode);
        }

        await using (var none = Open(o => o.Pragmas.Preset = PragmaPreset.None))
        {
            // WAL persists in the file: a run "without pragmas" would still be in WAL (the seed's fault 7).
            Assert.Equal(JournalMode.Wal, ((ISqliteBlockDatabase)none).AppliedPragmas.JournalMode);
        }

        await using var defaults = Open(o => o.Pragmas.Preset = PragmaPreset.SqliteDefaults);
        await using var session = await defaults.OpenSessionAsync(); // its connection is checked against the same values
        Assert.Equal(PragmaSettings.SqliteDefaults, ((ISqliteBlockDatabase)defaults).AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public async Task Single_pragmas_override_the_preset(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        await using var db = Open(o =>
        {
            o.Pragmas.Preset = PragmaPreset.SqliteDefaults;
            o.Pragmas.JournalMode = JournalMode.Truncate;
            o.Pragmas.CacheSize = 5000;
            o.Pragmas.BusyTimeout = 250;
        });
        await using var session = await db.OpenSessionAsync(); // its connection is checked against the same values
        Assert.Equal(PragmaSettings.SqliteDefaults with { JournalMode = JournalMode.Truncate, CacheSize = 5000, BusyTimeout = 250 }, ((ISqliteBlockDatabase)db).AppliedPragmas);
    }

    [Theory]
    [MemberData(nameof(Matrix), MemberType = typeof(ConformanceTestBase))]
    public void Invalid_options_name_the_setting_and_what_is_allowed(string provider, BlockLayout layout)
    {
        Use(provider, layout);
        var unknown = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Provider = "Oracle"));
        Assert.Equal("BlockDb:Provider", unknown.Setting);
        Assert.Contains("MicrosoftData, SystemData, PInvoke", unknown.Message, StringComparison.Ordinal);

        var busy = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.BusyTimeout = -1));
        Assert.Equal("BlockDb:Pragmas:BusyTimeout", busy.Setting);
        Assert.Contains("0 to 3600000", busy.Message, StringComparison.Ordinal);

        var journal = Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.JournalMode = (JournalMode)42));
        Assert.Contains("Delete, Truncate, Persist, Memory, Wal, Off", journal.Message, StringComparison.Ordinal);

        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Pragmas.MmapSize = -1));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.Batching.CommitEvery = -1));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.DataSource = " "));
        Assert.Throws<BlockDbConfigurationException>(() => Open(o => o.DataSource = ":memory:"));
        Assert.False(File.Exists(DbPath));
    }
}
