using System.Globalization;
using System.Reflection;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Configuration;

namespace BlockDb;

/// <summary>
/// Binds <see cref="BlockDbOptions"/> from Microsoft.Extensions.Configuration (an <c>appsettings.json</c>
/// <c>BlockDb</c> section, environment variables such as <c>BlockDb__Provider</c>, command-line arguments such as
/// <c>--BlockDb:Provider=PInvoke</c>) and validates the result, so bad settings fail at start with a message
/// that names the setting and lists the values allowed.
/// </summary>
public static partial class BlockDbConfiguration
{
    /// <summary>Binds and validates the options, including the named provider's own checks.</summary>
    /// <param name="configuration">The configuration root (its <c>BlockDb</c> section is read), the <c>BlockDb</c> section itself, or any section shaped like it.</param>
    /// <returns>The validated options.</returns>
    /// <exception cref="BlockDbConfigurationException">A key is unknown, a value does not convert, a value is out of range, or the provider is unknown, not installed or refuses a setting.</exception>
    public static BlockDbOptions Bind(IConfiguration configuration)
    {
        var options = new BlockDbOptions();
        BindInto(configuration, options);
        new BlockDatabaseBuilder(options).Resolve();
        return options;
    }

    /// <summary>Binds the section onto <paramref name="options"/> without validating the values (unknown keys, unconvertible values and enum values that are not one of the enum's values still fail).</summary>
    /// <param name="configuration">The configuration root or the <c>BlockDb</c> section.</param>
    /// <param name="options">The options to bind onto.</param>
    /// <exception cref="BlockDbConfigurationException">A key is unknown or a value does not convert.</exception>
    internal static void BindInto(IConfiguration configuration, BlockDbOptions options)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var section = BlockDbSection(configuration);
        RequireOneEnumValue(section);
        try
        {
            section.Bind(options, binder => binder.ErrorOnUnknownConfiguration = true);
        }
        catch (InvalidOperationException e)
        {
            throw Explain(e);
        }
    }

    /// <summary>
    /// The section the options bind from: a root's <c>BlockDb</c> section; a section named <c>BlockDb</c>, or one that
    /// holds no <c>BlockDb</c> child, itself (so a keyed index can bind from any section shaped like it); else that child.
    /// </summary>
    internal static IConfiguration BlockDbSection(IConfiguration configuration)
    {
        if (configuration is not IConfigurationSection section)
        {
            return configuration.GetSection(BlockDbOptions.SectionName);
        }

        if (section.Key == BlockDbOptions.SectionName)
        {
            return section;
        }

        var child = section.GetSection(BlockDbOptions.SectionName);
        return child.GetChildren().Any() ? child : section;
    }

    private static BlockDbConfigurationException Explain(InvalidOperationException e)
    {
        var conversion = ConversionFailure().Match(e.Message);
        if (conversion.Success)
        {
            var path = conversion.Groups[1].Value;
            var type = PropertyType(path);
            var allowed = type switch
            {
                { IsEnum: true } => AllowedValues(type),
                not null when type == typeof(int) || type == typeof(long) => "allowed: an integer",
                _ => "see docs for the allowed values",
            };
            return new BlockDbConfigurationException(path, $"{path} has a value that is not valid; {allowed}.", e);
        }

        var unknown = UnknownKey().Match(e.Message);
        if (unknown.Success)
        {
            var section = SectionOf(typeof(BlockDbOptions), BlockDbOptions.SectionName, unknown.Groups[1].Value) ?? BlockDbOptions.SectionName;
            var keys = string.Join(", ", unknown.Groups[2].Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).Select(k => Quoted.Value($"{section}:{k.Trim('\'')}")));
            return new BlockDbConfigurationException(
                section,
                $"Unknown BlockDb setting(s) {keys}; known settings: {string.Join(", ", KnownSettings(typeof(BlockDbOptions), BlockDbOptions.SectionName))}.",
                e);
        }

        return new BlockDbConfigurationException(BlockDbOptions.SectionName, $"The BlockDb configuration section could not be bound: {Quoted.Value(e.Message)}", e);
    }

    /// <summary>
    /// Refuses an enum-typed setting whose text is not exactly one of the enum's names (any case, spaces around it
    /// allowed) or the number of one of its values. Microsoft.Extensions.Configuration's binder converts enums with
    /// <c>Enum.Parse</c>, which reads a comma list as flags: <c>JournalMode = "Wal,Off"</c> would bind <c>Off</c>
    /// (4 | 5 = 5), <c>Synchronous = "Normal, Full"</c> <c>Extra</c>. Every enum-typed property of the option types is
    /// checked here, found by <see cref="Settings"/>, so a new one needs no code. An empty text leaves a nullable
    /// setting unset, as the binder does.
    /// </summary>
    /// <exception cref="BlockDbConfigurationException">An enum setting's text is anything else.</exception>
    private static void RequireOneEnumValue(IConfiguration section)
    {
        foreach (var (path, property) in Settings(typeof(BlockDbOptions), BlockDbOptions.SectionName))
        {
            var nullable = Nullable.GetUnderlyingType(property.PropertyType);
            var type = nullable ?? property.PropertyType;
            if (!type.IsEnum || section[path[(BlockDbOptions.SectionName.Length + 1)..]] is not { } text || (text.Length == 0 && nullable is not null))
            {
                continue;
            }

            var trimmed = text.Trim();
            var isName = Enum.GetNames(type).Any(name => name.Equals(trimmed, StringComparison.OrdinalIgnoreCase));
            var isNumber = long.TryParse(trimmed, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number)
                && Enum.GetValues(type).Cast<object>().Any(value => Convert.ToInt64(value, CultureInfo.InvariantCulture) == number);
            if (!isName && !isNumber)
            {
                throw new BlockDbConfigurationException(path, $"{path} is {Quoted.Value(text)}, which is not one of its values; {AllowedValues(type)}.");
            }
        }
    }

    private static string AllowedValues(Type enumType) =>
        $"allowed values: {string.Join(", ", Enum.GetNames(enumType))} (exactly one, in any case, or its number)";

    /// <summary>The type of the option at a configuration path such as <c>BlockDb:Pragmas:JournalMode</c>.</summary>
    private static Type? PropertyType(string path)
    {
        var property = Settings(typeof(BlockDbOptions), BlockDbOptions.SectionName).FirstOrDefault(s => s.Path.Equals(path, StringComparison.OrdinalIgnoreCase)).Property;
        return property is null ? null : Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
    }

    /// <summary>The configuration path of the options class named <paramref name="typeName"/> (the binder names the type, not the path).</summary>
    private static string? SectionOf(Type type, string path, string typeName)
    {
        if (type.FullName == typeName)
        {
            return path;
        }

        return type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.PropertyType.IsClass && p.PropertyType != typeof(string))
            .Select(p => SectionOf(p.PropertyType, $"{path}:{p.Name}", typeName))
            .FirstOrDefault(found => found is not null);
    }

    private static IEnumerable<string> KnownSettings(Type type, string prefix) => Settings(type, prefix).Select(s => s.Path);

    /// <summary>Every setting of an options type (its writable properties, nested option classes walked) with its configuration path.</summary>
    private static IEnumerable<(string Path, PropertyInfo Property)> Settings(Type type, string prefix) =>
        type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.CanWrite)
            .SelectMany(p => p.PropertyType.IsClass && p.PropertyType != typeof(string)
                ? Settings(p.PropertyType, $"{prefix}:{p.Name}")
                : [($"{prefix}:{p.Name}", p)]);

    [GeneratedRegex("configuration value .* at '([^']+)' to type", RegexOptions.Singleline)]
    private static partial Regex ConversionFailure();

    [GeneratedRegex("not found on the instance of ([^:]+): (.+)$", RegexOptions.Singleline)]
    private static partial Regex UnknownKey();
}
