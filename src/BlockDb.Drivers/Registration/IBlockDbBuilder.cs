using Microsoft.Extensions.DependencyInjection;

namespace BlockDb;

/// <summary>
/// What <c>services.AddBlockDb(...)</c> returns: the service collection it registered the database in, so that
/// provider packages can add themselves (<c>.AddPInvokeProvider()</c>, <c>.AddMicrosoftDataProvider()</c>, ...).
/// </summary>
public interface IBlockDbBuilder
{
    /// <summary>The service collection BlockDb was registered in.</summary>
    IServiceCollection Services { get; }

    /// <summary>The service key of a keyed registration (<c>AddBlockDb(serviceKey: …)</c>), or <see langword="null"/>.</summary>
    object? ServiceKey { get; }
}
