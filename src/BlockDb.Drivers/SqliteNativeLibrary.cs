using System.Collections.Concurrent;
using System.Reflection;
using System.Runtime.InteropServices;

namespace BlockDb.Drivers;

/// <summary>
/// The native SQLite library every BlockDb SQLite provider runs on: <c>e_sqlite3</c>, shipped by the
/// <c>SQLitePCLRaw.bundle_e_sqlite3</c> package (its <c>runtimes/&lt;rid&gt;/native</c> folder). A provider calls
/// <see cref="Require"/> before its first native call, so a machine where the library cannot be loaded gets a
/// <see cref="BlockDbConfigurationException"/> that says so, not a <see cref="DllNotFoundException"/> or a
/// <see cref="TypeInitializationException"/> from deep inside the provider.
/// </summary>
public static class SqliteNativeLibrary
{
    /// <summary>The library's name as the providers import it: <c>e_sqlite3</c>.</summary>
    public const string Name = "e_sqlite3";

    /// <summary>The package that ships the library: <c>SQLitePCLRaw.bundle_e_sqlite3</c>.</summary>
    public const string Package = "SQLitePCLRaw.bundle_e_sqlite3";

    // Per provider: null once the library loaded, else the error (a failed load is not retried: the process's
    // native search paths do not change).
    private static readonly ConcurrentDictionary<string, Lazy<BlockDbConfigurationException?>> Checked = new(StringComparer.Ordinal);

    /// <summary>The library's file name on this operating system (<c>libe_sqlite3.so</c> on Linux).</summary>
    public static string FileName =>
        OperatingSystem.IsWindows() ? Name + ".dll" : OperatingSystem.IsMacOS() ? "lib" + Name + ".dylib" : "lib" + Name + ".so";

    /// <summary>
    /// Loads <c>e_sqlite3</c> the way <paramref name="importer"/>'s P/Invoke calls will (the application's native
    /// assets, then the assembly's folder), once per provider, and throws when it cannot be loaded.
    /// </summary>
    /// <param name="provider">The provider's name in configuration, for the message.</param>
    /// <param name="importer">The assembly whose P/Invoke calls bind the library.</param>
    /// <exception cref="ArgumentNullException">An argument is <see langword="null"/>.</exception>
    /// <exception cref="BlockDbConfigurationException">The library cannot be loaded; the message names the provider, the library and the package that ships it.</exception>
    public static void Require(string provider, Assembly importer)
    {
        ArgumentNullException.ThrowIfNull(provider);
        ArgumentNullException.ThrowIfNull(importer);
        var problem = Checked.GetOrAdd(provider, p => new Lazy<BlockDbConfigurationException?>(() => Probe(p, importer))).Value;
        if (problem is not null)
        {
            // A new exception each time (same message and cause): a thrown object is not shared between callers.
            throw new BlockDbConfigurationException(problem.Setting, problem.Message, problem.InnerException);
        }
    }

    private static BlockDbConfigurationException? Probe(string provider, Assembly importer)
    {
        try
        {
            NativeLibrary.Load(Name, importer, null);
            return null;
        }
        catch (Exception e) when (e is DllNotFoundException or BadImageFormatException)
        {
            return new BlockDbConfigurationException(
                "BlockDb:Provider",
                $"The BlockDb provider '{provider}' cannot load SQLite's native library {Name} ({FileName}): {e.Message} "
                + $"The library ships in the {Package} package (runtimes/<rid>/native, through its SourceGear.sqlite3 dependency), "
                + $"which BlockDb's SQLite provider packages reference: deploy the application's runtimes folder with it (or publish for a "
                + $"runtime identifier that package supports, such as {RuntimeInformation.RuntimeIdentifier}).",
                e);
        }
    }
}
