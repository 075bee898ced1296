using BlockDb.Backup.Cli;

namespace BlockDb.Backup.Tests.Cli;

/// <summary>The sample's enum options (<c>--layout</c>, <c>--progress</c>) take exactly one name, in any case; a comma list or a number is a usage error.</summary>
public sealed class EnumOptionTests
{
    [Theory]
    [InlineData("convert", "out.db", "--layout", "BlobHash,TextHash")]
    [InlineData("convert", "out.db", "--layout", "1")]
    [InlineData("convert", "out.db", "--layout", "7")]
    [InlineData("verify", "--progress", "live,plain")]
    [InlineData("verify", "--progress", "2")]
    public void A_comma_list_or_a_number_is_a_usage_error(params string[] args) =>
        Assert.NotEmpty(BackupCli.Create([]).Parse(args).Errors);

    [Fact]
    public void One_name_in_any_case_is_accepted()
    {
        var parsed = BackupCli.Create([]).Parse(["convert", "out.db", "--layout", "blobhash", "--progress", " PLAIN"]);
        Assert.Empty(parsed.Errors);
        Assert.Equal(BlockLayout.BlobHash, parsed.GetValue<BlockLayout>("--layout"));
        Assert.Equal(BlockDb.Backup.Output.ProgressMode.Plain, parsed.GetValue<BlockDb.Backup.Output.ProgressMode>("--progress"));
    }
}
