namespace BlockDb.Tests.Volumes;

/// <summary>
/// What a volume can be registered as, on every provider and layout, through a session and through the shared
/// repository: a name that is valid UTF-16 with no control character and no whitespace at either end, stored and found
/// exactly as given, and a state a new volume starts in.
/// </summary>
public sealed class VolumeRegistrationConformanceTests : ConformanceTestBase
{
    [Theory]
    [MemberData(nameof(ProviderMatrixWithSessionKinds))]
    public async Task A_name_that_is_not_valid_utf16_is_refused_instead_of_being_stored_as_another_name(string provider, BlockLayout layout, string repository)
    {
        Use(provider, layout);
        await OnEach(repository, async (db, r) =>
        {
            foreach (var name in new[] { "vol-\uD800", "vol-\uDFFF", "\uDC00vol", "vol-\uDC00\uD800", "\uD800" })
            {
                var registered = await Assert.ThrowsAsync<ArgumentException>(async () => await r.RegisterVolumeAsync(name));
                Assert.Equal("name", registered.ParamName);
                Assert.Contains("surrogate", registered.Message, StringComparison.Ordinal);
                Assert.Equal("name", (await Assert.ThrowsAsync<ArgumentException>(async () => await r.FindVolumeAsync(name))).ParamName);
            }

            Assert.Contains("'vol-\\uD800'", (await Assert.ThrowsAsync<ArgumentException>(async () => await r.RegisterVolumeAsync("vol-\uD800"))).Message, StringComparison.Ordinal);
            Assert.Null(await r.FindVolumeAsync("vol-\uFFFD"));
            Assert.Equal(0, await CountAsync(db));

            // A pair is one character (U+1F600), and U+FFFD is a name of its own: each is stored and found exactly.
            var emoji = await r.RegisterVolumeAsync("vol-\uD83D\uDE00");
            var replacement = await r.RegisterVolumeAsync("vol-\uFFFD");
            Assert.NotEqual(emoji, replacement);
            Assert.Equal(("vol-\uD83D\uDE00", emoji), ((await r.FindVolumeAsync("vol-\uD83D\uDE00"))?.Name, (await r.FindVolumeAsync("vol-\uD83D\uDE00"))?.Id));
            Assert.Equal("vol-\uFFFD", (await r.GetVolumeAsync(replacement)).Name);
        });
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithSessionKinds))]
    public async Task A_blank_name_a_name_with_whitespace_at_an_end_or_one_holding_a_control_character_is_refused(string provider, BlockLayout layout, string repository)
    {
        Use(provider, layout);
        await OnEach(repository, async (db, r) =>
        {
            foreach (var name in new[] { " ", "   ", "\t", "\u3000", " b-1.zip", "b-1.zip ", "b-1.zip\n", "\u00A0b-1.zip", "b-1\0.zip", "b-1\u001B.zip", "b-1\u007F.zip", "b-1\u0085.zip" })
            {
                Assert.Equal("name", (await Assert.ThrowsAsync<ArgumentException>(async () => await r.RegisterVolumeAsync(name))).ParamName);
                Assert.Equal("name", (await Assert.ThrowsAsync<ArgumentException>(async () => await r.FindVolumeAsync(name))).ParamName);
            }

            Assert.Equal(0, await CountAsync(db));
            var id = await r.RegisterVolumeAsync("duplicati-b 1.dblock.zip");
            Assert.Equal(id, (await r.FindVolumeAsync("duplicati-b 1.dblock.zip"))?.Id);
        });
    }

    [Theory]
    [MemberData(nameof(ProviderMatrixWithSessionKinds))]
    public async Task A_volume_is_registered_only_in_a_state_a_new_volume_starts_in(string provider, BlockLayout layout, string repository)
    {
        Use(provider, layout);
        await OnEach(repository, async (db, r) =>
        {
            foreach (var state in new[] { VolumeState.Deleting, VolumeState.Deleted })
            {
                var e = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(async () => await r.RegisterVolumeAsync($"v-{state}", state));
                Assert.Equal("state", e.ParamName);
                Assert.Contains("Temporary, Uploading, Uploaded, Verified", e.Message, StringComparison.Ordinal);
                Assert.Null(await r.FindVolumeAsync($"v-{state}"));
            }

            Assert.Equal(0, await CountAsync(db));
            foreach (var state in new[] { VolumeState.Temporary, VolumeState.Uploading, VolumeState.Uploaded, VolumeState.Verified })
            {
                Assert.Equal(state, (await r.GetVolumeAsync(await r.RegisterVolumeAsync($"v-{state}", state))).State);
            }
        });
    }

    private async Task OnEach(string repository, Func<IBlockDatabase, Repository, Task> test)
    {
        await using var db = Open(o => o.Batching.CommitEvery = 1);
        if (repository == "session")
        {
            await using var session = await db.OpenSessionAsync();
            await test(db, new Repository(session, session));
        }
        else
        {
            await using var shared = db.OpenSharedSession();
            await test(db, new Repository(shared, shared));
        }
    }

    private static async Task<int> CountAsync(IBlockDatabase db)
    {
        var count = 0;
        await foreach (var _ in db.EnumerateVolumesAsync())
        {
            count++;
        }

        return count;
    }

    /// <summary>A session or the shared session, for the volume calls.</summary>
    private sealed record Repository(IBlockReader Reader, IBlockWriter Writer)
    {
        public ValueTask<long> RegisterVolumeAsync(string name, VolumeState state = VolumeState.Temporary) => Writer.RegisterVolumeAsync(name, state);

        public ValueTask<VolumeInfo?> FindVolumeAsync(string name) => Reader.FindVolumeAsync(name);

        public ValueTask<VolumeInfo> GetVolumeAsync(long id) => Reader.GetVolumeAsync(id);
    }
}
