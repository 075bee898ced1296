using System.Reflection;
using BlockDb.Layouts.Duplicati;
using static BlockDb.Tests.Duplicati.DuplicatiSessions;

namespace BlockDb.Tests.Duplicati;

/// <summary>What a session on a Duplicati file holds beyond its statements is released when the session closes.</summary>
public sealed class DuplicatiSessionCloseTests(DuplicatiTemplate template) : IClassFixture<DuplicatiTemplate>, IDisposable
{
    private readonly TempFolder _folder = new();

    public static IEnumerable<object[]> Modes() => DuplicatiMode.All();

    public void Dispose() => _folder.Dispose();

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task The_sessions_blocklist_hash_is_disposed_when_the_session_closes(DuplicatiMode mode)
    {
        var path = template.CopyTo(_folder);
        DuplicatiBlocksetRules rules;
        await using (var scope = await DuplicatiScope.OpenAsync(path, mode))
        {
            var volume = await scope.Session.RegisterVolumeAsync("duplicati-bclose.dblock.zip");
            await AddFileAsync(scope.Session, File("close", 40), volume, FullHash("close"));
            rules = Find<DuplicatiBlocksetRules>(scope.Session, 6) ?? throw new InvalidOperationException("the session holds no DuplicatiBlocksetRules");
            Assert.False(rules.Disposed);
        }

        Assert.True(rules.Disposed);
    }

    /// <summary>The first object of type <typeparamref name="T"/> reachable from <paramref name="root"/> through at most <paramref name="depth"/> fields.</summary>
    private static T? Find<T>(object? root, int depth)
        where T : class
    {
        if (root is T found)
        {
            return found;
        }

        if (root is null || depth == 0 || root is string || root.GetType().IsPrimitive)
        {
            return null;
        }

        for (var type = root.GetType(); type is not null && type != typeof(object); type = type.BaseType)
        {
            foreach (var field in type.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            {
                if (!field.FieldType.IsPrimitive && Find<T>(field.GetValue(root), depth - 1) is { } inner)
                {
                    return inner;
                }
            }
        }

        return null;
    }
}
