using System.Text;
using BlockDb.Bench.Model;
using BlockDb.Drivers;
using BlockDb.Opening;
using BlockDb.Sql;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The C baseline: compiles <c>bench/native/blockdb_native.c</c> (shipped beside the app) with make/gcc into
/// the work folder on first use, finds the exact <c>libe_sqlite3.so</c> this process loaded, and writes the
/// SQL file the program reads (every <see cref="BlockDbSql"/> statement, plus the PRAGMAs of a set).
/// </summary>
internal sealed class NativeBuild
{
    private readonly string _folder;

    private NativeBuild(string folder, string binary, string library, string version, string compiler)
    {
        _folder = folder;
        Binary = binary;
        Library = library;
        Version = version;
        Compiler = compiler;
    }

    public string Binary { get; }

    /// <summary>The libe_sqlite3.so path the .NET providers use.</summary>
    public string Library { get; }

    /// <summary>sqlite3_libversion() as the C program sees it.</summary>
    public string Version { get; }

    /// <summary>The C compiler's version line.</summary>
    public string Compiler { get; }

    public static NativeBuild Create(string workDir, Action<string> log)
    {
        var source = Path.Combine(AppContext.BaseDirectory, "native", "blockdb_native.c");
        var makefile = Path.Combine(AppContext.BaseDirectory, "native", "Makefile");
        if (!File.Exists(source) || !File.Exists(makefile))
        {
            throw new FileNotFoundException($"The native baseline source is missing beside the app ({source}); rebuild BlockDb.Bench.");
        }

        var folder = Path.Combine(workDir, "native");
        Directory.CreateDirectory(folder);
        var binary = Path.Combine(folder, "blockdb-native");
        var (code, stdout, stderr) = ProcessRunner.Run("make", ["-s", "-f", makefile, "SRC=" + source, "OUT=" + binary], folder);
        if (code != 0)
        {
            throw new InvalidOperationException($"Building the native baseline failed (make exit {code}): {stdout}{stderr}");
        }

        var library = NativeLibraryLocator.Find();
        var (vcode, vout, verr) = ProcessRunner.Run(binary, ["--version", "--lib", library]);
        var version = vout.Split('\n').FirstOrDefault(l => l.StartsWith("libversion=", StringComparison.Ordinal))?["libversion=".Length..].Trim();
        if (vcode != 0 || version is null)
        {
            throw new InvalidOperationException($"The native baseline cannot load {library}: {vout}{verr}");
        }

        var compiler = ProcessRunner.ToolVersion("cc", "--version") ?? "cc (unknown version)";
        log($"Native baseline: {binary} ({compiler}), dlopen {library}, SQLite {version}.");
        return new NativeBuild(folder, binary, library, version, compiler);
    }

    /// <summary>
    /// The statement on one line (the native SQL file holds one per line): line breaks and tabs become spaces, which
    /// changes nothing in SQL outside comments and string literals; a statement with a <c>--</c> comment or a line
    /// break inside a string literal is refused rather than changed.
    /// </summary>
    private static string OneLine(SqlStatement statement)
    {
        var sql = statement.Text;
        if (sql.AsSpan().IndexOfAny('\n', '\r', '\t') < 0)
        {
            return sql;
        }

        // Even parts lie outside string literals, odd parts inside ('' inside a literal splits into an empty even part).
        var parts = sql.Split('\'');
        for (var i = 0; i < parts.Length; i++)
        {
            if (i % 2 == 0 ? parts[i].Contains("--", StringComparison.Ordinal) : parts[i].AsSpan().IndexOfAny('\n', '\r', '\t') >= 0)
            {
                throw new InvalidOperationException($"BlockDbSql.{statement.Name} spans lines and holds a -- comment or a string literal with a line break; the native SQL file holds one statement per line, and joining its lines would change it.");
            }
        }

        return sql.Replace("\r\n", " ", StringComparison.Ordinal).Replace('\n', ' ').Replace('\r', ' ').Replace('\t', ' ');
    }

    /// <summary>Writes (once) the SQL file for a pragma configuration.</summary>
    public string SqlFile(PragmaSettings pragmas)
    {
        var text = new StringBuilder();
        foreach (var field in typeof(BlockDbSql).GetFields().Where(f => f.FieldType == typeof(SqlStatement)))
        {
            var statement = (SqlStatement)field.GetValue(null)!;
            text.Append(statement.Name).Append('\t').Append(OneLine(statement)).Append('\n');
        }

        // The DDL a bulk import runs around its rows (ARCHITECTURE M6), executed as text like the engine's Execute.
        foreach (var ddl in (SqlStatement[])[new(nameof(BlockDbSql.LiftGuardInsert), BlockDbSql.LiftGuardInsert), new(nameof(BlockDbSql.RestoreGuardInsert), BlockDbSql.RestoreGuardInsert)])
        {
            text.Append(ddl.Name).Append('\t').Append(OneLine(ddl)).Append('\n');
        }

        foreach (var pragma in PragmaSql.For(pragmas))
        {
            text.Append("PRAGMA\t").Append(pragma).Append('\n');
        }

        var content = text.ToString();
        var path = Path.Combine(_folder, $"sql-{(uint)StableHash(content):x8}.txt");
        if (!File.Exists(path))
        {
            File.WriteAllText(path, content);
        }

        return path;
    }

    private static int StableHash(string s)
    {
        var h = 17;
        foreach (var c in s)
        {
            h = unchecked((h * 31) + c);
        }

        return h;
    }
}

/// <summary>Finds the libe_sqlite3.so this process has loaded (so the C baseline opens the same file).</summary>
internal static class NativeLibraryLocator
{
    public static string Find()
    {
        // Make sure the providers have loaded it.
        foreach (var name in ProviderCatalog.SqliteNames)
        {
            _ = ProviderCatalog.SqliteDriver(name).NativeLibraryVersion;
        }

        const string maps = "/proc/self/maps";
        if (File.Exists(maps))
        {
            var loaded = File.ReadLines(maps)
                .Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries).LastOrDefault())
                .Where(p => p is not null && p.EndsWith("libe_sqlite3.so", StringComparison.Ordinal))
                .Distinct()
                .ToList();
            if (loaded.Count == 1)
            {
                return loaded[0]!;
            }

            if (loaded.Count > 1)
            {
                throw new InvalidOperationException($"Several libe_sqlite3.so files are loaded: {string.Join(", ", loaded)}.");
            }
        }

        var fallback = Path.Combine(AppContext.BaseDirectory, "runtimes", "linux-x64", "native", "libe_sqlite3.so");
        return File.Exists(fallback) ? fallback : throw new FileNotFoundException("libe_sqlite3.so not found in /proc/self/maps nor beside the app.");
    }
}
