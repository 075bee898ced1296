using BlockDb.Drivers;
using BlockDb.Drivers.Native;

namespace BlockDb.PInvoke;

/// <summary>
/// The BlockDb SQLite driver that calls the native <c>e_sqlite3</c> library (shipped by
/// <c>SQLitePCLRaw.bundle_e_sqlite3</c>) directly through source-generated P/Invoke, with no ADO.NET layer:
/// no per-operation managed allocation on binds, steps and integer reads.
/// </summary>
/// <remarks>The driver is stateless and thread-safe; the connections it opens are not.</remarks>
public sealed class PInvokeDriver : ISqliteDriver
{
    /// <summary>The provider name used in configuration: <c>PInvoke</c>.</summary>
    public const string ProviderName = "PInvoke";

    private static string? s_nativeLibraryVersion;

    private PInvokeDriver()
    {
    }

    /// <summary>The one instance; the driver holds no state.</summary>
    public static PInvokeDriver Instance { get; } = new();

    /// <inheritdoc />
    public string Name => ProviderName;

    /// <inheritdoc />
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    public string NativeLibraryVersion => s_nativeLibraryVersion ??= ReadLibraryVersion();

    /// <inheritdoc />
    /// <exception cref="ArgumentNullException"><paramref name="options"/> or its path is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The open mode is not defined.</exception>
    /// <exception cref="BlockDbConfigurationException">The native <c>e_sqlite3</c> library cannot be loaded.</exception>
    public ISqliteConnection Open(SqliteOpenOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        SqliteNativeLibrary.Require(ProviderName, typeof(PInvokeDriver).Assembly);
        return SqliteCloseGuard.Open(options, PInvokeConnection.Open);
    }

    private static unsafe string ReadLibraryVersion()
    {
        SqliteNativeLibrary.Require(ProviderName, typeof(PInvokeDriver).Assembly);
        return SqliteErrors.Utf8(SqliteNative.sqlite3_libversion()) ?? string.Empty;
    }
}
