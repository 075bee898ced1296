using System.Diagnostics.Metrics;

namespace BlockDb.Diagnostics;

/// <summary>An open database whose state the observable instruments read; implemented by each provider's database.</summary>
internal interface IBlockDbObservable
{
    /// <summary>Adds the key map's entry count or bytes (nothing when the layout has no map or it is not loaded).</summary>
    /// <param name="measurements">Where to add them.</param>
    /// <param name="bytes">Bytes rather than entries.</param>
    void ObserveKeyMap(List<Measurement<long>> measurements, bool bytes);

    /// <summary>Adds the writes waiting in the database's shared sessions.</summary>
    /// <param name="measurements">Where to add them.</param>
    void ObserveQueue(List<Measurement<long>> measurements);

    /// <summary>Adds the page-cache hits or misses summed over open sessions (nothing when the provider does not expose them).</summary>
    /// <param name="measurements">Where to add them.</param>
    /// <param name="hits">Hits rather than misses.</param>
    void ObservePageCache(List<Measurement<long>> measurements, bool hits);

    /// <summary>Adds the rows per table (may be cached).</summary>
    /// <param name="measurements">Where to add them.</param>
    void ObserveRows(List<Measurement<long>> measurements);
}
