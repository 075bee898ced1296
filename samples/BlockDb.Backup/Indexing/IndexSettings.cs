using BlockDb.Backup.Output;

namespace BlockDb.Backup.Indexing;

/// <summary>The options of <c>index</c>.</summary>
internal sealed record IndexSettings(
    string Directory,
    bool Fresh,
    long BlockSize,
    long VolumeSize,
    string? Record,
    int Hashers,
    ProgressMode Progress,
    bool Verify,
    int? Sample,
    int? Seed);
