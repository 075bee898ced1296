using System.Text.RegularExpressions;
using BlockDb.Opening;
using Xunit.Abstractions;

namespace BlockDb.Tests.Engine;

/// <summary>
/// How many BlockDb frames lie between the public <c>SelectXorInsertAsync</c> and the statement it runs, on a KeyMap hit
/// and miss on PInvoke (issue 23: one file per layout's hot path, at most 6 frames on a hit). The stress program's
/// <c>stackprobe</c> records the stacks through a tracing driver, with <c>DOTNET_JITMinOpts=1</c> so that nothing is
/// inlined and the frames are the source's, the same on every run. The bound is issue 23's target, met since S2.2's
/// one session class over a layout session (11 before S2.1, 8 after it); it fails when the path grows deeper.
/// </summary>
public sealed class HotPathShapeTests(ITestOutputHelper output)
{
    private const int MaxHitFrames = 6;

    [Fact]
    public async Task A_keymap_select_xor_insert_hit_on_pinvoke_runs_at_most_the_bounded_frames_before_its_statement()
    {
        var (exitCode, stdout, stderr) = await StressProgram.RunAsync(
            StressProgram.Assembly,
            ["stackprobe", ProviderCatalog.PInvoke, "20000"],
            new Dictionary<string, string> { ["DOTNET_JITMinOpts"] = "1", ["DOTNET_TieredCompilation"] = "0" });
        output.WriteLine(stdout);
        output.WriteLine(stderr);
        Assert.Equal(0, exitCode);

        var hit = Frames(stdout, "HIT");
        var miss = Frames(stdout, "MISS");
        Assert.True(hit <= MaxHitFrames, $"A hit runs {hit} BlockDb frames below the public call before its statement; the bound is {MaxHitFrames}.");
        Assert.True(miss >= hit, $"The miss ({miss} frames) runs the hit's lookup and more, so it cannot be shallower than the hit ({hit}).");
    }

    private static int Frames(string stdout, string label)
    {
        var match = Regex.Match(stdout, $"^{label} frames=(\\d+) files=(\\d+) statements=(\\d+)", RegexOptions.Multiline);
        Assert.True(match.Success, $"stackprobe printed no '{label} frames=' line.");
        return int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
    }
}
