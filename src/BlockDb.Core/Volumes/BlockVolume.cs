using BlockDb.Drivers;
using BlockDb.Layouts.Indexed;

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

    /// <summary>
    /// A block's ID through the unique (Hash, Size) index with its volume's state, in one read in the open write
    /// transaction (<see cref="Sql.BlockDbSql.FindBlockWithVolume"/>), or null: <see cref="Checked"/> unless the volume is
    /// going, which the blockset reads again to refuse the block with its message (<see cref="Unknown"/>).
    /// </summary>
    public static long? Find<TCodec>(ISqliteStatement findWithVolume, in BlockKey block, out BlockVolume volume)
        where TCodec : struct, IHashCodec
    {
        TCodec.Bind(findWithVolume, 1, block.Hash);
        findWithVolume.BindInt64(2, block.Size);
        try
        {
            if (!findWithVolume.Step())
            {
                volume = Unknown;
                return null;
            }

            volume = VolumeGuard.IsGoingState(findWithVolume, 1) ? Unknown : Checked;
            return findWithVolume.ColumnInt64(0);
        }
        finally
        {
            findWithVolume.Reset();
        }
    }
}
