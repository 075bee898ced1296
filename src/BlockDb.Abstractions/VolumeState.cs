namespace BlockDb;

/// <summary>
/// Where a remote volume (a file of blocks uploaded to the backup's storage) is in its life, as Duplicati's
/// <c>Remotevolume.State</c>: <see cref="Temporary"/> → <see cref="Uploading"/> → <see cref="Uploaded"/> →
/// <see cref="Verified"/>, and <see cref="Deleting"/> → <see cref="Deleted"/>. Stored by name. Blocks may be recorded
/// into, or moved to, a volume in any state before <see cref="Deleting"/> (a rebuild of the index records the blocks of
/// volumes that are long uploaded).
/// </summary>
public enum VolumeState
{
    /// <summary>Being filled locally; not uploaded.</summary>
    Temporary = 0,

    /// <summary>Its upload has started.</summary>
    Uploading = 1,

    /// <summary>Uploaded to the storage.</summary>
    Uploaded = 2,

    /// <summary>Uploaded and read back (its hash checked).</summary>
    Verified = 3,

    /// <summary>Marked for deletion from the storage; allowed only once none of its blocks is referenced by a blockset.</summary>
    Deleting = 4,

    /// <summary>Deleted from the storage; it holds no blocks any more.</summary>
    Deleted = 5,
}
