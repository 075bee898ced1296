using System.CommandLine;
using System.CommandLine.Parsing;
using BlockDb.Backup.Comparison;
using BlockDb.Backup.Indexing;
using BlockDb.Backup.Lifecycle;
using BlockDb.Backup.Output;
using BlockDb.Backup.Verification;

namespace BlockDb.Backup.Cli;

/// <summary>
/// The command line (System.CommandLine): <c>index</c>, <c>verify</c>, <c>compare</c>, <c>check</c>, <c>repair</c>, and the
/// lifecycle: <c>delete</c>, <c>gc</c>, <c>list</c> and <c>convert</c>.
/// </summary>
internal sealed class BackupCli
{
    private const long MinBlockSize = 1 << 10;
    private const long MaxBlockSize = 256 << 20;
    private const long DefaultVolumeSize = 50L << 20;
    private const long MinVolumeSize = 1 << 10;
    private const long MaxVolumeSize = 64L << 30;

    private readonly IReadOnlyList<string> _configurationArgs;

    private readonly Option<string?> _config = new("--config")
    {
        Description = "A JSON file layered over appsettings.json (same shape: a \"BlockDb\" section)",
        HelpName = "file.json",
        Recursive = true,
    };

    private readonly Option<string?> _provider = new("--provider")
    {
        Description = $"The SQLite provider, BlockDb:Provider ({string.Join(", ", MicrosoftData.MicrosoftDataDriver.ProviderName, SystemData.SystemDataDriver.ProviderName, PInvoke.PInvokeDriver.ProviderName)})",
        HelpName = "name",
        Recursive = true,
    };

    private readonly Option<bool> _verbose = new("--verbose", "-v")
    {
        Description = "Log at Information level (default: Warning)",
        Recursive = true,
    };

    private readonly Option<string?> _db = new("--db")
    {
        Description = $"The database file, BlockDb:DataSource (default: ./{AppConfiguration.DefaultDatabase}); the sidecar is <db>.files.tsv (a Duplicati database's: in Backup:DataFolder)",
        HelpName = "path",
    };

    private readonly Option<ProgressMode> _progress = new("--progress")
    {
        Description = "auto: live on a terminal, plain lines on stderr when redirected or in CI; live; plain; none",
        DefaultValueFactory = _ => ProgressMode.Auto,
        CustomParser = OneName<ProgressMode>,
    };

    private readonly Option<int?> _sample = new("--sample")
    {
        Description = "Verify N files chosen at random (default: all)",
        HelpName = "N",
    };

    private readonly Option<int?> _seed = new("--seed")
    {
        Description = "The random seed of --sample, for a repeatable sample",
    };

    private BackupCli(IReadOnlyList<string> configurationArgs)
    {
        _configurationArgs = configurationArgs;
        _sample.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int?>() is < 1)
            {
                r.AddError("--sample must be 1 or more.");
            }
        });
    }

    /// <param name="configurationArgs">The <c>--BlockDb:Key=Value</c> arguments taken out before parsing (<see cref="ConfigArgs"/>).</param>
    public static RootCommand Create(IReadOnlyList<string> configurationArgs)
    {
        var cli = new BackupCli(configurationArgs);
        var root = new RootCommand(
            "blockdb-backup: indexes a directory into a BlockDb block index (Block, Blockset, BlocksetEntry, Remotevolume) as a Duplicati-style backup would, "
            + "verifies it against the files, compares indexes, deletes files, collects unreferenced blocks, lists and converts the index. "
            + "Any BlockDb setting can be given as --BlockDb:Section:Key=Value.")
        {
            cli._config,
            cli._provider,
            cli._verbose,
        };
        root.Add(cli.IndexCommand());
        root.Add(cli.VerifyCommand());
        root.Add(cli.CompareCommand());
        root.Add(cli.CheckCommand());
        root.Add(cli.RepairCommand());
        root.Add(cli.DeleteCommand());
        root.Add(cli.GcCommand());
        root.Add(cli.ListCommand());
        root.Add(cli.ConvertCommand());
        root.Add(cli.UpgradeDuplicatiCommand());
        root.Add(Maintenance.InfoCommand.Create(cli._db, cli.Common));
        return root;
    }

    private Command IndexCommand()
    {
        var directory = new Argument<string>("directory") { Description = "The directory to index, recursively" };
        var fresh = new Option<bool>("--fresh") { Description = "Delete the database (and its -wal, -shm and sidecar) first" };
        var blockSize = new Option<long?>("--block-size")
        {
            Description = "The fixed block size: bytes, or with a unit such as 100KiB or 1MiB (K, M, G are 1024-based); default 1MiB, on a Duplicati database its own blocksize (another one is refused)",
            HelpName = "size",
            CustomParser = ParseBlockSize,
        };
        var volumeSize = new Option<long>("--volume-size")
        {
            Description = "New blocks go into volumes (duplicati-b000001.dblock.zip…) of this many bytes, Duplicati's default 50MB; a full volume is set Uploaded",
            HelpName = "size",
            DefaultValueFactory = _ => DefaultVolumeSize,
            CustomParser = ParseVolumeSize,
        };
        var record = new Option<string?>("--record")
        {
            Description = "Also write the block stream as TSV (file_index, block_index, hash, size) for the benchmark harness",
            HelpName = "file.tsv",
        };
        var hashers = new Option<int>("--hashers")
        {
            Description = "Hashing tasks running in parallel (default: the processor count)",
            DefaultValueFactory = _ => Environment.ProcessorCount,
        };
        hashers.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int>() is < 1 or > 64)
            {
                r.AddError("--hashers must be 1 to 64.");
            }
        });
        var verify = new Option<bool>("--verify") { Description = "Verify after indexing (with --sample and --seed)" };
        var command = new Command("index", "Walk a directory, cut each regular file into fixed-size blocks, hash them (SHA-256) and record each file as a blockset")
        {
            directory, _db, fresh, blockSize, volumeSize, record, hashers, _progress, verify, _sample, _seed,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(
            () => Indexing.IndexCommand.RunAsync(
                Common(r),
                new IndexSettings(r.GetRequiredValue(directory), r.GetValue(fresh), r.GetValue(blockSize), r.GetValue(volumeSize), r.GetValue(record), r.GetValue(hashers), r.GetValue(_progress), r.GetValue(verify), r.GetValue(_sample), r.GetValue(_seed)),
                ct),
            ct));
        return command;
    }

    private Command VerifyCommand()
    {
        var directory = new Argument<string?>("directory")
        {
            Description = "Verify only the indexed files under this directory (default: all in the sidecar)",
            Arity = ArgumentArity.ZeroOrOne,
        };
        var command = new Command("verify", "Read each indexed file's blockset back (GetBlocksetAsync, ListBlocksetBlocksAsync) and check it against the file on disk")
        {
            directory, _db, _sample, _seed, _progress,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(
            () => Verification.VerifyCommand.RunAsync(Common(r), new VerifySettings(r.GetValue(directory), r.GetValue(_sample), r.GetValue(_seed), r.GetValue(_progress)), ct),
            ct));
        return command;
    }

    private Command CompareCommand()
    {
        var databases = new Argument<string[]>("databases")
        {
            Description = "Two or more database files; each is compared with the first",
            Arity = new ArgumentArity(2, 64),
        };
        var command = new Command("compare", "Check that databases hold the same blocks, blocksets and row counts, and the same content per path (through their sidecars)")
        {
            databases,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(
            () => Comparison.CompareCommand.RunAsync(Common(r), r.GetRequiredValue(databases), ct),
            ct));
        return command;
    }

    private Command CheckCommand()
    {
        var command = new Command("check", "Check the index in one snapshot, beside running writers: duplicate blocks, entries naming missing blocks, blockset lengths, entry order, IDs the layout cannot hold, the KeyMap map and guards, integrity_check. Exit 1 when anything is found")
        {
            _db,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(() => Maintenance.CheckCommand.CheckAsync(Common(r), ct), ct));
        return command;
    }

    private Command RepairCommand()
    {
        var command = new Command("repair", "Merge duplicate blocks into their lowest ID and renumber IDs the layout cannot hold, in one transaction; refused while another writer holds the write lock. Then check again (exit 1 when problems remain)")
        {
            _db,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(() => Maintenance.CheckCommand.RepairAsync(Common(r), ct), ct));
        return command;
    }

    private Command DeleteCommand()
    {
        var path = new Argument<string?>("path")
        {
            Description = "Delete the indexed files at or under this path (a file or a folder)",
            Arity = ArgumentArity.ZeroOrOne,
        };
        var fraction = new Option<double?>("--fraction")
        {
            Description = "Delete this share of the files (of those under PATH, or of all), chosen evenly in sidecar order: 0.5 deletes every other file",
            HelpName = "F",
        };
        fraction.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<double?>() is { } f && !(f > 0 && f <= 1))
            {
                r.AddError("--fraction must be above 0 and at most 1.");
            }
        });
        var dryRun = new Option<bool>("--dry-run") { Description = "Report what would be deleted; change nothing" };
        var command = new Command("delete", "Drop files from the backup: take their lines out of the sidecar and delete the blocksets no remaining file names (DeleteBlocksetAsync); their blocks stay until gc. Give PATH, --fraction, or both")
        {
            path, _db, fraction, dryRun,
        };
        command.Validators.Add(r =>
        {
            if (r.GetValue(path) is null && r.GetValue(fraction) is null)
            {
                r.AddError("delete needs a PATH, --fraction F, or both (it never deletes every file by default).");
            }
        });
        command.SetAction((r, ct) => CommandRunner.RunAsync(
            () => Lifecycle.DeleteCommand.RunAsync(Common(r), new DeleteSettings(r.GetValue(path), r.GetValue(fraction) ?? 1.0, r.GetValue(dryRun)), ct),
            ct));
        return command;
    }

    private Command GcCommand()
    {
        var volume = new Option<string?>("--volume")
        {
            Description = "Collect only this volume's unreferenced blocks (default: all volumes)",
            HelpName = "name",
        };
        var command = new Command("gc", "Garbage collection: report each volume's waste (unreferenced bytes), delete the blocks no blockset references (DeleteUnreferencedBlocksAsync), report blocks and bytes deleted per volume, and set volumes left without any block Deleting, then Deleted")
        {
            _db, volume,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(() => Lifecycle.GcCommand.RunAsync(Common(r), r.GetValue(volume), ct), ct));
        return command;
    }

    private Command ListCommand()
    {
        Option<int?> Limit(string what) => new("--limit")
        {
            Description = $"Show at most N {what}",
            HelpName = "N",
            Validators =
            {
                r =>
                {
                    if (r.GetValueOrDefault<int?>() is < 1)
                    {
                        r.AddError("--limit must be 1 or more.");
                    }
                },
            },
        };

        var volumesLimit = Limit("volumes (default: all; the totals count all)");
        var volumes = new Command("volumes", "Each volume: name, state, size, blocks, bytes and waste (bytes of blocks no blockset references), then the totals")
        {
            _db, volumesLimit,
        };
        volumes.SetAction((r, ct) => CommandRunner.RunAsync(() => Lifecycle.ListCommand.VolumesAsync(Common(r), r.GetValue(volumesLimit), ct), ct));

        var blocksetsLimit = Limit($"blocksets (default: {Lifecycle.ListCommand.DefaultLimit})");
        var blocksets = new Command("blocksets", "The first blocksets in ID order: length, block count, full hash, and the files that name them (sidecar)")
        {
            _db, blocksetsLimit,
        };
        blocksets.SetAction((r, ct) => CommandRunner.RunAsync(() => Lifecycle.ListCommand.BlocksetsAsync(Common(r), r.GetValue(blocksetsLimit), ct), ct));

        var blocksLimit = Limit($"blocks (default: {Lifecycle.ListCommand.DefaultLimit})");
        var volume = new Option<string?>("--volume") { Description = "Only this volume's blocks", HelpName = "name" };
        var unreferenced = new Option<bool>("--unreferenced") { Description = "Only blocks no blockset references (what gc deletes)" };
        var blocks = new Command("blocks", "The first blocks in ID order: hash, size and volume")
        {
            _db, volume, unreferenced, blocksLimit,
        };
        blocks.SetAction((r, ct) => CommandRunner.RunAsync(() => Lifecycle.ListCommand.BlocksAsync(Common(r), r.GetValue(volume), r.GetValue(unreferenced), r.GetValue(blocksLimit), ct), ct));

        return new Command("list", "List the index's volumes, blocksets or blocks, streamed from one read snapshot (it can run beside a backup)")
        {
            volumes, blocksets, blocks,
        };
    }

    private Command ConvertCommand()
    {
        var target = new Argument<string>("target") { Description = "The new database file; it must not exist (its sidecar is copied next to it)" };
        var layout = new Option<BlockLayout>("--layout")
        {
            Description = "The new file's layout: KeyMap, BlobHash or TextHash",
            Required = true,
            CustomParser = OneName<BlockLayout>,
        };
        var merge = new Option<bool>("--merge-duplicates") { Description = "Merge duplicate (hash, size) blocks of the source into their lowest ID (default: refuse such a source, exit code 4)" };
        var command = new Command("convert", "Copy the index (--db) into a new file of another layout, every ID kept (BlockDbConverter), then check the new file (exit 1 when the check finds anything)")
        {
            target, _db, layout, merge, _progress,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(
            () => Lifecycle.ConvertCommand.RunAsync(Common(r), new ConvertSettings(r.GetRequiredValue(target), r.GetValue(layout), r.GetValue(merge), r.GetValue(_progress)), ct),
            ct));
        return command;
    }

    private Command UpgradeDuplicatiCommand()
    {
        var revert = new Option<bool>("--revert") { Description = "Re-create the index the upgrade dropped, exactly as Duplicati's Schema.sql does" };
        var command = new Command("upgrade-duplicati", "Upgrade a Duplicati local database (--db) in place (DuplicatiUpgrade): drop BlocksetEntry_BlocksetID, whose every use the table's primary key serves; every table and row is kept and no Duplicati query changes. Refused while Duplicati has the file open. Then check it (exit 1 when the check finds anything)")
        {
            _db, revert,
        };
        command.SetAction((r, ct) => CommandRunner.RunAsync(() => Maintenance.UpgradeDuplicatiCommand.RunAsync(Common(r), r.GetValue(revert), ct), ct));
        return command;
    }

    private CommonSettings Common(ParseResult r) =>
        new(r.GetValue(_config), r.GetValue(_provider), r.GetResult(_db) is null ? null : r.GetValue(_db), r.GetValue(_verbose), _configurationArgs);

    private static long ParseVolumeSize(ArgumentResult result)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : string.Empty;
        if (ByteSize.TryParse(text, out var bytes) && bytes is >= MinVolumeSize and <= MaxVolumeSize)
        {
            return bytes;
        }

        result.AddError($"--volume-size '{text}' is not valid: give {MinVolumeSize} to {MaxVolumeSize} bytes, e.g. 50MB or 1GiB.");
        return 0;
    }

    /// <summary>
    /// An enum option's value: exactly one of its names, in any case. System.CommandLine's own conversion
    /// (<c>Enum.TryParse</c>) reads a comma list as flags and takes any number, so <c>--layout BlobHash,TextHash</c>
    /// converted to BlobHash and <c>--progress live,plain</c> to none.
    /// </summary>
    private static TEnum OneName<TEnum>(ArgumentResult result)
        where TEnum : struct, Enum
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : string.Empty;
        var name = Enum.GetNames<TEnum>().FirstOrDefault(n => n.Equals(text.Trim(), StringComparison.OrdinalIgnoreCase));
        if (name is not null)
        {
            return Enum.Parse<TEnum>(name);
        }

        result.AddError($"{(result.Parent as OptionResult)?.Option.Name} '{text}' is not valid: give one of {string.Join(", ", Enum.GetNames<TEnum>())}.");
        return default;
    }

    private static long? ParseBlockSize(ArgumentResult result)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : string.Empty;
        if (ByteSize.TryParse(text, out var bytes) && bytes is >= MinBlockSize and <= MaxBlockSize)
        {
            return bytes;
        }

        result.AddError($"--block-size '{text}' is not valid: give {MinBlockSize} to {MaxBlockSize} bytes, e.g. 1048576, 100KiB or 1MiB.");
        return null;
    }
}
