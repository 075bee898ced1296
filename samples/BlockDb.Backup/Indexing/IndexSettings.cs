using BlockDb.Backup.Output;

namespace BlockDb.Backup.Indexing;

/// <summary>The options of <c>index</c>. <see cref="BlockSize"/> is null when not given: 1 MiB, or a Duplicati database's own.</summary>
internal sealed record IndexSettings(
    string Directory,
    bool Fresh,
    long? BlockSize,
    long VolumeSize,
    string? Record,
    int Hashers,
    ProgressMode Progress,
    bool Verify,
    int? Sample,
    int? Seed);
