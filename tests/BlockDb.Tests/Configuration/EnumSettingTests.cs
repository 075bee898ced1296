using System.Globalization;
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace BlockDb.Tests.Configuration;

/// <summary>
/// Every enum-typed setting takes exactly one of its names (in any case) or its number. A comma list, which the
/// configuration binder would combine as flags into whatever value the bits happen to name, is refused with the
/// setting and its allowed names.
/// </summary>
public sealed class EnumSettingTests : IDisposable
{
    private readonly TempFolder _folder = new();

    public void Dispose() => _folder.Dispose();

    /// <summary>Every enum-typed setting under <see cref="BlockDbOptions"/>, found from the option types, so a new one is covered with no new test code.</summary>
    public static TheoryData<string> EnumSettings()
    {
        var data = new TheoryData<string>();
        foreach (var (key, _) in Settings(typeof(BlockDbOptions), BlockDbOptions.SectionName))
        {
            data.Add(key);
        }

        return data;
    }

    [Fact]
    public void A_comma_list_of_journal_modes_is_refused_instead_of_turning_journaling_off()
    {
        var config = Config(("Provider", "PInvoke"), ("DataSource", _folder.File("j.db")), ("Pragmas:JournalMode", "Wal,Off"));

        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(config));
        Assert.Equal("BlockDb:Pragmas:JournalMode", e.Setting);
        Assert.Contains("'Wal,Off'", e.Message, StringComparison.Ordinal);
        Assert.Contains("Delete, Truncate, Persist, Memory, Wal, Off", e.Message, StringComparison.Ordinal);
        Assert.Equal("BlockDb:Pragmas:JournalMode", Assert.Throws<BlockDbConfigurationException>(() => new ServiceCollection().AddBlockDb(config)).Setting);
        Assert.False(File.Exists(_folder.File("j.db")));
    }

    [Fact]
    public void A_comma_list_of_synchronous_modes_is_refused_instead_of_applying_extra()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(
            Config(("Provider", "PInvoke"), ("DataSource", _folder.File("s.db")), ("Pragmas:Synchronous", "Normal, Full"))));
        Assert.Equal("BlockDb:Pragmas:Synchronous", e.Setting);
        Assert.Contains("Off, Normal, Full, Extra", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_comma_list_of_layouts_is_refused_instead_of_opening_the_first()
    {
        var e = Assert.Throws<BlockDbConfigurationException>(() => BlockDbConfiguration.Bind(
            Config(("Provider", "PInvoke"), ("DataSource", _folder.File("l.db")), ("Index:Layout", "BlobHash,TextHash"))));
        Assert.Equal("BlockDb:Index:Layout", e.Setting);
        Assert.Contains("TextHash, BlobHash, KeyMap", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(EnumSettings))]
    public void An_enum_setting_takes_one_name_in_any_case_or_its_number_and_refuses_anything_else(string key)
    {
        var type = Settings(typeof(BlockDbOptions), BlockDbOptions.SectionName).Single(s => s.Key == key).Type;
        var names = Enum.GetNames(type);
        var allowed = string.Join(", ", names);
        foreach (var name in names)
        {
            var value = Enum.Parse(type, name);
            Assert.Equal(value, Bound(key, name.ToUpperInvariant()));
            Assert.Equal(value, Bound(key, $" {name.ToLowerInvariant()} "));
            Assert.Equal(value, Bound(key, Convert.ToInt64(value, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture)));
        }

        var undefined = Enum.GetValues(type).Cast<object>().Max(v => Convert.ToInt64(v, CultureInfo.InvariantCulture)) + 1;
        string[] refused =
        [
            .. from a in names from b in names where a != b select $"{a},{b}",
            $"{names[0]}, {names[^1]}",
            $"{names[0]},",
            "0,1",
            undefined.ToString(CultureInfo.InvariantCulture),
            "-1",
            "0x1",
            "Bogus",
        ];
        foreach (var value in refused)
        {
            var e = Assert.Throws<BlockDbConfigurationException>(() => Bound(key, value));
            Assert.Equal(key, e.Setting);
            Assert.Contains(allowed, e.Message, StringComparison.Ordinal);
        }
    }

    /// <summary>Binds one setting and returns the bound value of that property.</summary>
    private static object? Bound(string key, string value)
    {
        var options = new BlockDbOptions();
        BlockDbConfiguration.BindInto(Config((key[(BlockDbOptions.SectionName.Length + 1)..], value)), options);
        object? target = options;
        foreach (var part in key.Split(':').Skip(1))
        {
            target = target!.GetType().GetProperty(part)!.GetValue(target);
        }

        return target;
    }

    private static IEnumerable<(string Key, Type Type)> Settings(Type type, string prefix)
    {
        foreach (var property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(p => p.CanWrite))
        {
            var propertyType = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
            if (propertyType.IsEnum)
            {
                yield return ($"{prefix}:{property.Name}", propertyType);
            }
            else if (propertyType.IsClass && propertyType != typeof(string))
            {
                foreach (var nested in Settings(propertyType, $"{prefix}:{property.Name}"))
                {
                    yield return nested;
                }
            }
        }
    }

    private static IConfiguration Config(params (string Key, string Value)[] settings) =>
        new ConfigurationBuilder()
            .AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>($"{BlockDbOptions.SectionName}:{s.Key}", s.Value)))
            .Build();
}
