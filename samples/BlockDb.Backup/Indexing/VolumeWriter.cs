using System.Globalization;

namespace BlockDb.Backup.Indexing;

/// <summary>
/// Puts the new blocks of an index run into remote volumes, as a Duplicati backup fills its <c>dblock</c> files: the
/// current volume is registered <see cref="VolumeState.Temporary"/> (named <c>duplicati-b000001.dblock.zip</c>,
/// <c>duplicati-b000002.dblock.zip</c>…), every new block is recorded into it, and once the new blocks recorded into it
/// reach the volume size it is set <see cref="VolumeState.Uploaded"/> with its size (the sum of those blocks' bytes)
/// and the next one starts. Blocks that already exist keep their volume. Nothing is uploaded: the volumes are rows.
/// A run that ends with a volume holding no block yet leaves it <see cref="VolumeState.Temporary"/>; so does a cancelled
/// run with the volume it was filling. The next run goes on filling it (the highest-numbered volume, when Temporary).
/// On a Duplicati database (<see cref="DuplicatiVolumeNames"/> given) volumes are named as Duplicati names them
/// (<c>&lt;prefix&gt;-b&lt;32 hex&gt;.dblock.zip</c>…, from its Configuration), every run starts a new one (as Duplicati does;
/// a Temporary volume of the file may be Duplicati's own), and a full volume is not set Uploaded but left
/// <see cref="VolumeState.Temporary"/>: no dblock file exists, and Duplicati's next run drops Temporary volumes its
/// remote listing lacks, where an Uploaded one missing remotely would stop it ("missing from the remote storage").
/// Single-threaded, as the session is.
/// </summary>
internal sealed class VolumeWriter
{
    /// <summary>The start of a volume's name.</summary>
    public const string NamePrefix = "duplicati-b";

    /// <summary>The end of a volume's name.</summary>
    public const string NameSuffix = ".dblock.zip";

    private readonly IBlockSession _repository;
    private readonly long _volumeSize;
    private readonly IndexStats _stats;
    private readonly List<string> _uploaded = [];
    private readonly DuplicatiVolumeNames? _duplicati;
    private long _nextNumber;
    private long? _current;
    private string? _currentName;
    private long _currentBytes;

    private VolumeWriter(IBlockSession repository, long volumeSize, IndexStats stats, long nextNumber, DuplicatiVolumeNames? duplicati)
    {
        _duplicati = duplicati;
        _repository = repository;
        _volumeSize = volumeSize;
        _stats = stats;
        _nextNumber = nextNumber;
    }

    /// <summary>The state a full volume is left in: Uploaded, or Temporary on a Duplicati database.</summary>
    public VolumeState ClosedState => _duplicati is not null ? VolumeState.Temporary : VolumeState.Uploaded;

    /// <summary>The volumes this run closed (set <see cref="ClosedState"/>), in order.</summary>
    public IReadOnlyList<string> Uploaded => _uploaded;

    /// <summary>The volume being filled and the bytes of new blocks in it, or <see langword="null"/> when none is open.</summary>
    public (string Name, long Bytes)? Open => _currentName is null ? null : (_currentName, _currentBytes);

    /// <summary>The volume size: a volume is closed once its new blocks reach it.</summary>
    public long VolumeSize => _volumeSize;

    /// <summary>The name of the volume numbered <paramref name="number"/>: <c>duplicati-b000042.dblock.zip</c>.</summary>
    public static string Name(long number) => string.Create(CultureInfo.InvariantCulture, $"{NamePrefix}{number:D6}{NameSuffix}");

    /// <summary>The number in a volume name this sample gives, or <see langword="null"/> for any other name.</summary>
    public static long? Number(string name) =>
        name.StartsWith(NamePrefix, StringComparison.Ordinal) && name.EndsWith(NameSuffix, StringComparison.Ordinal)
        && long.TryParse(name.AsSpan(NamePrefix.Length, name.Length - NamePrefix.Length - NameSuffix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var number)
            ? number
            : null;

    /// <summary>
    /// Reads the volumes the index holds (<see cref="IBlockDatabase.EnumerateVolumesAsync"/>) to number the next one
    /// after them, or to go on filling the last one when it is still Temporary. On a Duplicati database nothing is read:
    /// the run's volumes get Duplicati's names and the first one is new.
    /// </summary>
    /// <param name="database">The database, for the enumeration.</param>
    /// <param name="repository">The run's session, which records the blocks and the volumes.</param>
    /// <param name="volumeSize">The volume size in bytes.</param>
    /// <param name="stats">Where volumes started are counted.</param>
    /// <param name="duplicati">On a Duplicati database, its volume names; full volumes are then left Temporary instead of set Uploaded.</param>
    /// <param name="cancellationToken">Cancels the enumeration.</param>
    /// <returns>The writer.</returns>
    public static async Task<VolumeWriter> StartAsync(IBlockDatabase database, IBlockSession repository, long volumeSize, IndexStats stats, DuplicatiVolumeNames? duplicati, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(volumeSize, 1);
        if (duplicati is not null)
        {
            return new VolumeWriter(repository, volumeSize, stats, 1, duplicati);
        }

        VolumeInfo? last = null;
        long lastNumber = 0;
        await foreach (var volume in database.EnumerateVolumesAsync(cancellationToken).ConfigureAwait(false))
        {
            if (Number(volume.Name) is { } number && number > lastNumber)
            {
                (last, lastNumber) = (volume, number);
            }
        }

        var writer = new VolumeWriter(repository, volumeSize, stats, lastNumber + 1, duplicati: null);
        if (last is { State: VolumeState.Temporary })
        {
            writer._current = last.Id;
            writer._currentName = last.Name;
            writer._currentBytes = last.BlockBytes;
        }

        return writer;
    }

    /// <summary>The volume a new block goes into, registering the next one when none is open.</summary>
    /// <param name="cancellationToken">Cancels the registration.</param>
    /// <returns>The volume's ID.</returns>
    public async ValueTask<long> CurrentAsync(CancellationToken cancellationToken)
    {
        if (_current is { } id)
        {
            return id;
        }

        var name = _duplicati?.Next() ?? Name(_nextNumber);
        id = await _repository.RegisterVolumeAsync(name, VolumeState.Temporary, cancellationToken).ConfigureAwait(false);
        _nextNumber++;
        (_current, _currentName, _currentBytes) = (id, name, 0);
        _stats.AddVolume();
        return id;
    }

    /// <summary>Counts a new block recorded into the current volume, and closes the volume when it is full.</summary>
    /// <param name="size">The block's size in bytes.</param>
    /// <param name="cancellationToken">Cancels the state change.</param>
    /// <returns>A task that completes when the block is counted.</returns>
    public async ValueTask AddedAsync(long size, CancellationToken cancellationToken)
    {
        _currentBytes += size;
        if (_currentBytes >= _volumeSize)
        {
            await CloseAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Sets the current volume Uploaded with its size (or leaves it Temporary, see the class), when it holds new blocks; a volume without any stays Temporary and open for the next run.</summary>
    /// <param name="cancellationToken">Cancels the state change.</param>
    /// <returns>A task that completes when the change is in the batch.</returns>
    public async ValueTask CloseAsync(CancellationToken cancellationToken)
    {
        if (_current is not { } id || _currentBytes == 0)
        {
            return;
        }

        if (_duplicati is null)
        {
            await _repository.SetVolumeStateAsync(id, VolumeState.Uploaded, _currentBytes, cancellationToken).ConfigureAwait(false);
        }

        _uploaded.Add(_currentName!);
        (_current, _currentName, _currentBytes) = (null, null, 0);
    }
}
