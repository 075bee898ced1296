using System.Reflection;

namespace BlockDb.Opening;

/// <summary>
/// The check that an engine provider from another assembly (BlockDb.PostgreSql) is BlockDb.Core's own version. Such a
/// provider implements Core's internal engine contract (<see cref="IEngineProvider"/>, through
/// <c>InternalsVisibleTo</c>), which may change in any release, so the two packages ship and run at one version; a
/// mismatch (an application that updated one package and not the other) is refused before the provider's types are
/// loaded, with a message that says which versions met, rather than a <see cref="TypeLoadException"/> or
/// <see cref="MissingMethodException"/> from inside the engine.
/// </summary>
internal static class PackageVersions
{
    /// <summary>BlockDb.Core's version (the package version, without the commit).</summary>
    public static string Core { get; } = Of(typeof(PackageVersions).Assembly);

    /// <summary>An assembly's package version: its informational version without the build metadata (<c>+commit</c>), else its assembly version.</summary>
    /// <param name="assembly">The assembly.</param>
    /// <returns>For example <c>0.1.0</c>.</returns>
    public static string Of(Assembly assembly)
    {
        var informational = assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        return informational is { Length: > 0 }
            ? informational.Split('+')[0]
            : assembly.GetName().Version?.ToString(3) ?? "0.0.0";
    }

    /// <summary>Throws unless <paramref name="provider"/> is BlockDb.Core's version; nothing for Core itself.</summary>
    /// <param name="provider">The assembly of an engine provider.</param>
    /// <exception cref="BlockDbConfigurationException">The versions differ; the message names both packages and versions.</exception>
    public static void RequireSame(Assembly provider)
    {
        if (provider == typeof(PackageVersions).Assembly)
        {
            return;
        }

        var version = Of(provider);
        if (!string.Equals(version, Core, StringComparison.Ordinal))
        {
            var name = provider.GetName().Name;
            throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:Provider",
                $"{name} {version} needs BlockDb.Core {version}; found BlockDb.Core {Core}. {name} runs on BlockDb.Core's internal engine contract, so both packages must be the same version: reference {name} and BlockDb.Core (or the BlockDb package) at one version.");
        }
    }
}
