using System.Collections.Concurrent;
using System.Reflection;
using BlockDb.Drivers;

namespace BlockDb.Opening;

/// <summary>
/// Finds the provider that <see cref="BlockDbOptions.Provider"/> names: first among those registered explicitly
/// (<see cref="BlockDatabaseBuilder.UseSqliteDriver"/>, <c>Add…Provider()</c> in a service collection), then among
/// BlockDb's own providers, loaded by assembly name from the application's references. Tests, the bench and the tool
/// programs reach a SQLite driver by name here (<see cref="SqliteDriver"/>); applications name it in the options. An engine provider
/// from another assembly (BlockDb.PostgreSql) must be Core's own version (<see cref="PackageVersions"/>): checked
/// before its types are loaded, and again for one registered through dependency injection.
/// </summary>
internal static class ProviderCatalog
{
    /// <summary>The Microsoft.Data.Sqlite provider (package <c>BlockDb.MicrosoftData</c>).</summary>
    public const string MicrosoftData = "MicrosoftData";

    /// <summary>The System.Data.SQLite provider (package <c>BlockDb.SystemData</c>).</summary>
    public const string SystemData = "SystemData";

    /// <summary>The direct P/Invoke provider into <c>e_sqlite3</c> (package <c>BlockDb.PInvoke</c>).</summary>
    public const string PInvoke = "PInvoke";

    /// <summary>The PostgreSQL provider, on Npgsql (package <c>BlockDb.PostgreSql</c>).</summary>
    public const string PostgreSql = "PostgreSql";

    /// <summary>The provider used when <see cref="BlockDbOptions.Provider"/> is not set and no provider, or more than one, was registered.</summary>
    public const string Default = MicrosoftData;

    private static readonly KnownProvider[] Known =
    [
        new(MicrosoftData, "BlockDb.MicrosoftData.MicrosoftDataDriver, BlockDb.MicrosoftData", "BlockDb.MicrosoftData", string.Empty),
        new(SystemData, "BlockDb.SystemData.SystemDataDriver, BlockDb.SystemData", "BlockDb.SystemData",
            " It needs System.Data.SQLite.dll beside the application: the BlockDb.SystemData package brings it (the System.Data.SQLite package)."),
        new(PInvoke, "BlockDb.PInvoke.PInvokeDriver, BlockDb.PInvoke", "BlockDb.PInvoke", string.Empty),
        new(PostgreSql, "BlockDb.PostgreSql.PostgreSqlProvider, BlockDb.PostgreSql", "BlockDb.PostgreSql", string.Empty, IsSqlite: false),
    ];

    private static readonly ConcurrentDictionary<string, Lazy<IEngineProvider>> Loaded = new(StringComparer.OrdinalIgnoreCase);
    private static readonly ConcurrentDictionary<ISqliteDriver, SqliteProvider> Wrapped = new();

    /// <summary>BlockDb's own SQLite providers, in documentation order.</summary>
    public static IReadOnlyList<string> SqliteNames { get; } = [.. Known.Where(k => k.IsSqlite).Select(k => k.Name)];

    /// <summary>All of BlockDb's own providers, SQLite first, in documentation order.</summary>
    public static IReadOnlyList<string> AllNames { get; } = [.. Known.Select(k => k.Name)];

    /// <summary>Whether <paramref name="name"/> is one of BlockDb's own providers (found without registration).</summary>
    public static bool IsKnown(string name) => Known.Any(k => string.Equals(k.Name, name.Trim(), StringComparison.OrdinalIgnoreCase));

    /// <summary>The provider <paramref name="name"/> names (null: the only registered one, else <see cref="Default"/>).</summary>
    /// <exception cref="BlockDbConfigurationException">The name is unknown, several providers are registered and none is named, or a known provider is not installed or fails to load.</exception>
    public static IEngineProvider Find(string? name, IReadOnlyCollection<IEngineProvider> registered)
    {
        if (name is null)
        {
            var distinct = registered.DistinctBy(p => p.Name, StringComparer.OrdinalIgnoreCase).ToList();
            if (distinct.Count == 1)
            {
                return distinct[0];
            }

            name = Default;
        }

        var wanted = name.Trim();
        var explicitOne = registered.FirstOrDefault(p => string.Equals(p.Name, wanted, StringComparison.OrdinalIgnoreCase));
        if (explicitOne is not null)
        {
            PackageVersions.RequireSame(explicitOne.GetType().Assembly);
            return explicitOne;
        }

        var known = Known.FirstOrDefault(k => string.Equals(k.Name, wanted, StringComparison.OrdinalIgnoreCase))
            ?? throw new BlockDbConfigurationException(
                $"{BlockDbOptions.SectionName}:Provider",
                $"Unknown BlockDb provider {Quoted.Value(name)}; valid providers: {string.Join(", ", AllNames.Concat(registered.Select(p => p.Name)).Distinct(StringComparer.OrdinalIgnoreCase))}.");
        try
        {
            return Loaded.GetOrAdd(known.Name, _ => new Lazy<IEngineProvider>(() => Load(known))).Value;
        }
        catch (BlockDbConfigurationException)
        {
            Loaded.TryRemove(known.Name, out _); // a later call may succeed once the package is there (tests, plug-ins)
            throw;
        }
    }

    /// <summary>One of BlockDb's own SQLite drivers by name, case-insensitively, loading its package's assembly.</summary>
    /// <exception cref="BlockDbConfigurationException">No SQLite provider has that name (the message lists them), or its package is missing or fails to load.</exception>
    public static ISqliteDriver SqliteDriver(string? name) => Find(name, []) switch
    {
        SqliteProvider sqlite => sqlite.Driver,
        var other => throw new BlockDbConfigurationException(
            $"{BlockDbOptions.SectionName}:Provider",
            $"The BlockDb provider '{other.Name}' is not a SQLite provider; valid SQLite providers: {string.Join(", ", SqliteNames)}."),
    };

    /// <summary>The engine's provider for a SQLite driver (one per driver).</summary>
    public static SqliteProvider Wrap(ISqliteDriver driver) => Wrapped.GetOrAdd(driver, static d => new SqliteProvider(d));

    /// <summary>Loads one of BlockDb's own providers from its assembly (internal for the tests of a missing package).</summary>
    internal static IEngineProvider Load(KnownProvider known)
    {
        var setting = $"{BlockDbOptions.SectionName}:Provider";
        Type? type;
        try
        {
            if (!known.IsSqlite && LoadAssembly(known.Package) is { } assembly)
            {
                // An engine provider implements Core's internal contract: refuse another version before loading its types.
                PackageVersions.RequireSame(assembly);
            }

            type = Type.GetType(known.TypeName, throwOnError: false);
        }
        catch (Exception e) when (e is FileLoadException or BadImageFormatException or TypeLoadException or MissingMemberException)
        {
            throw new BlockDbConfigurationException(setting, $"The BlockDb provider '{known.Name}' could not be loaded: {e.Message}.{known.Hint}", e);
        }

        if (type is null)
        {
            throw new BlockDbConfigurationException(
                setting,
                $"The BlockDb provider '{known.Name}' is not installed: add the {known.Package} package (or the BlockDb package, which brings every provider) to the application.{known.Hint}");
        }

        object? instance;
        try
        {
            instance = type.GetProperty("Instance", BindingFlags.Public | BindingFlags.Static)?.GetValue(null);
        }
        catch (TargetInvocationException e)
        {
            var cause = e.InnerException is TypeInitializationException { InnerException: { } inner } ? inner : e.InnerException ?? e;
            throw new BlockDbConfigurationException(setting, $"The BlockDb provider '{known.Name}' failed to load: {cause.Message}{known.Hint}", cause);
        }

        return instance switch
        {
            ISqliteDriver driver => Wrap(driver),
            IEngineProvider provider => provider,
            _ => throw new BlockDbConfigurationException(setting, $"The BlockDb provider '{known.Name}' ({known.TypeName}) has no public static Instance that is a BlockDb provider."),
        };
    }

    /// <summary>The assembly <paramref name="name"/>, or null when the application does not have it.</summary>
    private static Assembly? LoadAssembly(string name)
    {
        try
        {
            return Assembly.Load(new AssemblyName(name));
        }
        catch (FileNotFoundException)
        {
            return null;
        }
    }

    /// <summary>One of BlockDb's own providers: its name, its type, its package, what to add when it fails to load, and whether it is a SQLite driver (a server provider is not).</summary>
    internal sealed record KnownProvider(string Name, string TypeName, string Package, string Hint, bool IsSqlite = true);
}
