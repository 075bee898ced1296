using BlockDb.Backup.Output;

namespace BlockDb.Backup.Verification;

/// <summary>The options of <c>verify</c> (and of <c>index --verify</c>).</summary>
/// <param name="Directory">Verify only the sidecar's files under this folder; all when <see langword="null"/>.</param>
/// <param name="Sample">Verify this many files chosen at random; all when <see langword="null"/>.</param>
/// <param name="Seed">The random seed of the sample, for a repeatable choice.</param>
/// <param name="Progress">How progress is shown.</param>
internal sealed record VerifySettings(string? Directory, int? Sample, int? Seed, ProgressMode Progress);
