using BlockDb;
using BlockDb.MicrosoftData;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the MicrosoftData provider (Microsoft.Data.Sqlite) with BlockDb's dependency injection.</summary>
public static class MicrosoftDataBlockDbBuilderExtensions
{
    /// <summary>
    /// Registers the <c>MicrosoftData</c> provider, so that <c>BlockDb:Provider = MicrosoftData</c> selects it
    /// (<c>services.AddBlockDb(configuration).AddMicrosoftDataProvider()</c>). When it is the only provider registered and
    /// <c>BlockDb:Provider</c> is not set, it is the one used.
    /// </summary>
    /// <param name="builder">What <c>AddBlockDb</c> returned.</param>
    /// <returns>The same builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    public static IBlockDbBuilder AddMicrosoftDataProvider(this IBlockDbBuilder builder) => builder.AddSqliteDriver(MicrosoftDataDriver.Instance);
}
