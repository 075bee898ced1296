using BlockDb.Drivers;
using BlockDb.MicrosoftData;
using BlockDb.PInvoke;
using BlockDb.SystemData;

namespace BlockDb;

/// <summary>The providers BlockDb ships, by the name used in configuration (<c>BlockDb:Provider</c>).</summary>
public static class BlockDbProviders
{
    private static readonly Dictionary<string, Func<ISqliteDriver>> Catalog = new(StringComparer.OrdinalIgnoreCase)
    {
        [MicrosoftDataDriver.ProviderName] = () => MicrosoftDataDriver.Instance,
        [SystemDataDriver.ProviderName] = () => SystemDataDriver.Instance,
        [PInvokeDriver.ProviderName] = () => PInvokeDriver.Instance,
    };

    /// <summary>The provider names, in the order the documentation lists them.</summary>
    public static IReadOnlyList<string> Names { get; } = [.. Catalog.Keys];

    /// <summary>Gets a provider's driver by name, case-insensitively.</summary>
    /// <param name="name">The provider name, for example <c>PInvoke</c>.</param>
    /// <returns>The driver.</returns>
    /// <exception cref="BlockDbConfigurationException">No provider has that name; the message lists the valid names.</exception>
    public static ISqliteDriver Get(string? name)
    {
        if (name is not null && Catalog.TryGetValue(name.Trim(), out var create))
        {
            return create();
        }

        throw new BlockDbConfigurationException(
            $"{BlockDbOptions.SectionName}:Provider",
            $"Unknown BlockDb provider '{name}'; valid providers: {string.Join(", ", Names)}.");
    }
}
