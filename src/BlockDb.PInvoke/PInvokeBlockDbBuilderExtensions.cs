using BlockDb;
using BlockDb.PInvoke;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the PInvoke provider (direct P/Invoke into e_sqlite3) with BlockDb's dependency injection.</summary>
public static class PInvokeBlockDbBuilderExtensions
{
    /// <summary>
    /// Registers the <c>PInvoke</c> provider, so that <c>BlockDb:Provider = PInvoke</c> selects it
    /// (<c>services.AddBlockDb(configuration).AddPInvokeProvider()</c>). When it is the only provider registered and
    /// <c>BlockDb:Provider</c> is not set, it is the one used.
    /// </summary>
    /// <param name="builder">What <c>AddBlockDb</c> returned.</param>
    /// <returns>The same builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    public static IBlockDbBuilder AddPInvokeProvider(this IBlockDbBuilder builder) => builder.AddSqliteDriver(PInvokeDriver.Instance);
}
