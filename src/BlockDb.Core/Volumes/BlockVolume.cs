namespace BlockDb.Volumes;

/// <summary>
/// What a layout session's select-xor-insert, run inside the write transaction, knows about the found or created block's
/// volume: checked already (a block it created, whose volume <see cref="VolumeGuard.RequireRecordable(long?)"/>
/// accepted in this transaction, or a block read with its volume's state, not going), read with the block's row in this transaction (<see cref="VolumeId"/>, null when
/// the block has none), or unknown (the blockset must read the row itself).
/// </summary>
internal readonly struct BlockVolume
{
    private readonly byte _kind;

    private BlockVolume(byte kind, long? volumeId) => (_kind, VolumeId) = (kind, volumeId);

    /// <summary>The layout session did not read the block's volume.</summary>
    public static BlockVolume Unknown => default;

    /// <summary>The block was created in this transaction in a volume found fit then, or read in it with its volume's state, not Deleting or Deleted.</summary>
    public static BlockVolume Checked => new(1, null);

    /// <summary>The block's row, read in this transaction, names this volume (or none).</summary>
    public static BlockVolume Read(long? volumeId) => new(2, volumeId);

    /// <summary>Whether the layout session did not read the volume.</summary>
    public bool IsUnknown => _kind == 0;

    /// <summary>Whether the volume was checked when the block was created.</summary>
    public bool IsChecked => _kind == 1;

    /// <summary>The block's volume as read, when neither unknown nor checked.</summary>
    public long? VolumeId { get; }
}
