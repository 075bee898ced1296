namespace BlockDb;

/// <summary>No volume has the given ID. Nothing of the call was written.</summary>
public sealed class VolumeNotFoundException : BlockDbException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="volumeId">The unknown ID.</param>
    public VolumeNotFoundException(long volumeId)
        : base($"No volume has ID {volumeId}; register it first (RegisterVolumeAsync).")
    {
        VolumeId = volumeId;
    }

    /// <summary>The unknown volume ID.</summary>
    public long VolumeId { get; }
}
