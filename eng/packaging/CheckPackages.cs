// Offline checks of the packages `dotnet pack` wrote, the part of `dotnet nuget verify` and of a registry's
// validation that needs no network: each .nupkg has its id, the expected version, a description, the MIT licence
// expression, a readme that is in the package, the project and repository URLs and the commit; each library has a
// .snupkg whose pdbs carry SourceLink (every document mapped to the repository URL or embedded) and deterministic
// paths; BlockDb.SystemData depends on the System.Data.SQLite package and carries no third-party assembly of its own,
// BlockDb.Tool carries System.Data.SQLite.dll among its dependencies and no Mono.Data.Sqlite.dll; BlockDb.Tool is a
// .NET tool named blockdb; every BlockDb.* dependency of a package names this version (the packages share internals
// through InternalsVisibleTo), and BlockDb.PostgreSql depends on BlockDb.Core (whose internal engine contract it runs on).
//
//   dotnet run eng/packaging/CheckPackages.cs -- <feed folder> <version> [<commit>]
//
// Prints one line per package and exits 1 when anything is missing.
using System.IO.Compression;
using System.Reflection.Metadata;
using System.Text.Json;
using System.Xml.Linq;

if (args.Length < 2)
{
    Console.Error.WriteLine("usage: CheckPackages.cs <feed folder> <version> [<commit>]");
    return 2;
}

var feed = args[0];
var version = args[1];
var commit = args.Length > 2 ? args[2] : null;
const string RepositoryUrl = "https://github.com/blockdb/blockdb";
string[] libraries =
[
    "BlockDb.Abstractions", "BlockDb.Drivers", "BlockDb.Core", "BlockDb.MicrosoftData", "BlockDb.SystemData",
    "BlockDb.PInvoke", "BlockDb.PostgreSql", "BlockDb",
];
const string Tool = "BlockDb.Tool";
var sourceLinkKind = new Guid("CC110556-A091-4D38-9FEC-25AB9A351A6A");
var embeddedSourceKind = new Guid("0E8A571B-6926-466E-B4AD-8AB04611F5FE");

var failures = new List<string>();
foreach (var id in libraries.Append(Tool))
{
    var problems = new List<string>();
    var path = Path.Combine(feed, $"{id}.{version}.nupkg");
    if (!File.Exists(path))
    {
        Console.WriteLine($"FAIL {id} {version}: {path} is missing");
        failures.Add($"{id}: {path} is missing");
        continue;
    }

    using (var package = ZipFile.OpenRead(path))
    {
        CheckNuspec(id, package, problems);
        foreach (var (dependency, range) in VersionedDependencies(package).Where(d => d.Id.StartsWith("BlockDb", StringComparison.Ordinal)))
        {
            if (range != version && range != $"[{version}]")
            {
                problems.Add($"depends on {dependency} {range}, not on this version {version}: BlockDb packages share internals and ship at one version");
            }
        }

        if (id == "BlockDb.PostgreSql" && !Dependencies(package).Contains("BlockDb.Core"))
        {
            problems.Add("does not depend on BlockDb.Core, whose internal engine contract it runs on");
        }

        if (id == "BlockDb.SystemData")
        {
            // The provider's own assembly only: System.Data.SQLite and the native e_sqlite3 come as package dependencies.
            var foreign = package.Entries.Where(e => e.FullName.EndsWith(".dll", StringComparison.OrdinalIgnoreCase)
                && !e.FullName.EndsWith("/BlockDb.SystemData.dll", StringComparison.Ordinal)).Select(e => e.FullName).ToList();
            if (foreign.Count > 0)
            {
                problems.Add($"ships assemblies that are not its own: {string.Join(", ", foreign)}");
            }

            foreach (var dependency in new[] { "System.Data.SQLite", "SQLitePCLRaw.bundle_e_sqlite3" })
            {
                if (!Dependencies(package).Contains(dependency))
                {
                    problems.Add($"does not depend on the {dependency} package");
                }
            }
        }

        if (id == Tool)
        {
            Require(package, "tools/net10.0/any/System.Data.SQLite.dll", problems);
        }

        if (package.Entries.FirstOrDefault(e => e.FullName.Contains("Mono.Data.Sqlite", StringComparison.OrdinalIgnoreCase)) is { } mono)
        {
            problems.Add($"still carries {mono.FullName}");
        }

        if (id == Tool)
        {
            Require(package, "tools/net10.0/any/DotnetToolSettings.xml", problems);
            var settings = Read(package, "tools/net10.0/any/DotnetToolSettings.xml");
            if (settings is not null && !XDocument.Parse(settings).Descendants("Command").Any(c => c.Attribute("Name")?.Value == "blockdb"))
            {
                problems.Add("DotnetToolSettings.xml does not name the command blockdb");
            }
        }
    }

    var symbols = Path.ChangeExtension(path, ".snupkg");
    var pdbs = 0;
    if (id != Tool)
    {
        if (!File.Exists(symbols))
        {
            problems.Add($"no symbol package {Path.GetFileName(symbols)}");
        }
        else
        {
            using var symbolPackage = ZipFile.OpenRead(symbols);
            foreach (var pdb in symbolPackage.Entries.Where(e => e.FullName.EndsWith(".pdb", StringComparison.OrdinalIgnoreCase)))
            {
                pdbs++;
                CheckPdb(pdb, problems);
            }

            if (pdbs == 0)
            {
                problems.Add("the symbol package holds no pdb");
            }
        }
    }

    Console.WriteLine(problems.Count == 0
        ? $"ok   {id} {version}{(pdbs > 0 ? $" ({pdbs} pdb with SourceLink)" : string.Empty)}"
        : $"FAIL {id} {version}: {string.Join("; ", problems)}");
    failures.AddRange(problems.Select(p => $"{id}: {p}"));
}

Console.WriteLine(failures.Count == 0 ? "packages: all checks passed" : $"packages: {failures.Count} problem(s)");
return failures.Count == 0 ? 0 : 1;

void CheckNuspec(string id, ZipArchive package, List<string> problems)
{
    var entry = package.Entries.SingleOrDefault(e => !e.FullName.Contains('/') && e.FullName.EndsWith(".nuspec", StringComparison.OrdinalIgnoreCase));
    if (entry is null)
    {
        problems.Add("no .nuspec");
        return;
    }

    using var stream = entry.Open();
    var metadata = XDocument.Load(stream).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
    string? Value(string name) => metadata.Elements().FirstOrDefault(e => e.Name.LocalName == name)?.Value;
    XElement? Element(string name) => metadata.Elements().FirstOrDefault(e => e.Name.LocalName == name);

    Expect(Value("id") == id, $"id is '{Value("id")}'");
    Expect(Value("version") == version, $"version is '{Value("version")}', expected {version}");
    Expect(!string.IsNullOrWhiteSpace(Value("description")), "no description");
    Expect(!string.IsNullOrWhiteSpace(Value("authors")), "no authors");
    var license = Element("license");
    Expect(license?.Attribute("type")?.Value == "expression" && license.Value == "MIT", "the licence is not the expression MIT");
    var readme = Value("readme");
    Expect(!string.IsNullOrEmpty(readme), "no readme element");
    if (!string.IsNullOrEmpty(readme))
    {
        var text = Read(package, readme);
        Expect(text is { Length: > 200 }, $"the readme {readme} is missing or nearly empty");
    }

    Expect(Value("projectUrl") == RepositoryUrl, $"projectUrl is '{Value("projectUrl")}'");
    var repository = Element("repository");
    Expect(repository?.Attribute("url")?.Value == RepositoryUrl, $"repository url is '{repository?.Attribute("url")?.Value}'");
    Expect(repository?.Attribute("type")?.Value == "git", "repository type is not git");
    var built = repository?.Attribute("commit")?.Value;
    Expect(!string.IsNullOrEmpty(built) && (commit is null || built == commit), $"repository commit is '{built}', expected {commit ?? "one"}");
    if (id == Tool)
    {
        var types = metadata.Elements().FirstOrDefault(e => e.Name.LocalName == "packageTypes");
        Expect(types?.Elements().Any(e => e.Attribute("name")?.Value == "DotnetTool") == true, "package type is not DotnetTool");
    }

    void Expect(bool condition, string problem)
    {
        if (!condition)
        {
            problems.Add(problem);
        }
    }
}

HashSet<string> Dependencies(ZipArchive package) => [.. VersionedDependencies(package).Select(d => d.Id)];

List<(string Id, string Version)> VersionedDependencies(ZipArchive package)
{
    var entry = package.Entries.Single(e => !e.FullName.Contains('/') && e.FullName.EndsWith(".nuspec", StringComparison.OrdinalIgnoreCase));
    using var stream = entry.Open();
    return [.. XDocument.Load(stream).Descendants().Where(e => e.Name.LocalName == "dependency")
        .Select(e => (e.Attribute("id")?.Value ?? string.Empty, e.Attribute("version")?.Value ?? string.Empty)).Distinct()];
}

void CheckPdb(ZipArchiveEntry entry, List<string> problems)
{
    using var stream = new MemoryStream();
    using (var source = entry.Open())
    {
        source.CopyTo(stream);
    }

    stream.Position = 0;
    using var provider = MetadataReaderProvider.FromPortablePdbStream(stream);
    var reader = provider.GetMetadataReader();
    string? json = null;
    foreach (var handle in reader.GetCustomDebugInformation(EntityHandle.ModuleDefinition))
    {
        var info = reader.GetCustomDebugInformation(handle);
        if (reader.GetGuid(info.Kind) == sourceLinkKind)
        {
            json = System.Text.Encoding.UTF8.GetString(reader.GetBlobBytes(info.Value));
        }
    }

    var name = Path.GetFileName(entry.FullName);
    if (json is null)
    {
        problems.Add($"{name} has no SourceLink");
        return;
    }

    // {"documents": {"/_/*": "https://raw.githubusercontent.com/blockdb/blockdb/<commit>/*"}}
    var map = JsonDocument.Parse(json).RootElement.GetProperty("documents").EnumerateObject()
        .Select(p => (Local: p.Name, Url: p.Value.GetString() ?? string.Empty)).ToList();
    var expectedUrl = $"https://raw.githubusercontent.com/blockdb/blockdb/{commit ?? string.Empty}";
    if (!map.Any(m => m.Url.StartsWith(expectedUrl, StringComparison.Ordinal)))
    {
        problems.Add($"{name}: SourceLink maps to {string.Join(", ", map.Select(m => m.Url))}, not {expectedUrl}…");
    }

    var unmapped = new List<string>();
    var documents = 0;
    foreach (var handle in reader.Documents)
    {
        var document = reader.GetDocument(handle);
        var path = reader.GetString(document.Name);
        documents++;
        var embedded = reader.GetCustomDebugInformation(handle)
            .Any(h => reader.GetGuid(reader.GetCustomDebugInformation(h).Kind) == embeddedSourceKind);
        var mapped = map.Any(m => m.Local.EndsWith('*') ? path.StartsWith(m.Local[..^1], StringComparison.Ordinal) : path == m.Local);
        if (!embedded && !mapped)
        {
            unmapped.Add(path);
        }

        if (!path.StartsWith("/_/", StringComparison.Ordinal))
        {
            unmapped.Add($"{path} (not a deterministic /_/ path)");
        }
    }

    if (documents == 0)
    {
        problems.Add($"{name} lists no source documents");
    }

    if (unmapped.Count > 0)
    {
        problems.Add($"{name}: {unmapped.Count} document(s) neither mapped nor embedded, e.g. {unmapped[0]}");
    }
}

static void Require(ZipArchive package, string entry, List<string> problems)
{
    if (package.GetEntry(entry) is null)
    {
        problems.Add($"{entry} is missing");
    }
}

static string? Read(ZipArchive package, string entry)
{
    var found = package.GetEntry(entry);
    if (found is null)
    {
        return null;
    }

    using var reader = new StreamReader(found.Open());
    return reader.ReadToEnd();
}
