namespace BlockDb;

/// <summary>The outcome of select-xor-insert.</summary>
/// <param name="Id">The block's ID.</param>
/// <param name="Created"><see langword="true"/> when this call inserted the block; <see langword="false"/> when it existed.</param>
public readonly record struct SelectXorInsertResult(long Id, bool Created);
