#!/usr/bin/env bash
# The packages as a new user gets them (issue 14). Packs every package into a local folder feed, checks them offline
# (eng/packaging/CheckPackages.cs), builds the consumer applications in eng/consumer against the feed only, runs them
# with each provider chosen by BlockDb__Provider over one index (each run reopening it with another provider), checks
# that a missing runtime piece is a BlockDbConfigurationException, then installs the blockdb tool from the feed and
# runs `blockdb info` on an index it builds. Exits non-zero on the first failure.
#
#   bash eng/package-test.sh [--no-build|--no-pack]
#     --no-build: pack what `dotnet test -c Release` just built (CI); --no-pack: test the packages already in the feed
#
# With BLOCKDB_TEST_POSTGRES set (eval "$(eng/postgres.sh start)"), the consumer also runs on the PostgreSql provider.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

no_build=()
pack=1
case "${1:-}" in
  --no-build) no_build=(--no-build) ;;
  --no-pack) pack=0 ;;
  "") ;;
  *) echo "usage: $0 [--no-build|--no-pack]" >&2; exit 2 ;;
esac

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
version="$(sed -n 's:.*<VersionPrefix>\(.*\)</VersionPrefix>.*:\1:p' eng/Packaging.props)"
commit="$(git rev-parse HEAD)"
feed="$root/artifacts/feed"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The consumer's own package folder: third-party packages stay cached between runs, BlockDb's are taken fresh from
# the feed each time (the version does not change between commits, so a cached copy would be an older build).
export NUGET_PACKAGES="$root/artifacts/consumer-packages"
mkdir -p "$NUGET_PACKAGES"
rm -rf "$NUGET_PACKAGES"/blockdb*

step() { echo "== package-test: $*"; }
start=$SECONDS

if [ "$pack" = 1 ]; then
  step "pack $version ($commit) into $feed"
  rm -rf "$feed"
  # ContinuousIntegrationBuild: deterministic paths (/_/) in the pdbs, as the packages are published.
  dotnet pack BlockDb.sln -c Release "${no_build[@]}" -o "$feed" -p:ContinuousIntegrationBuild=true -v:q -nologo
fi
ls "$feed"

step "offline package checks"
dotnet run eng/packaging/CheckPackages.cs -- "$feed" "$version" "$commit"

step "build the consumers against the feed"
for project in eng/consumer/full/Consumer.csproj eng/consumer/lean/LeanConsumer.csproj; do
  dotnet restore "$project" --force -p:BlockDbVersion="$version" -v:q
  dotnet build "$project" -c Release --no-restore -p:BlockDbVersion="$version" -v:q -nologo -o "$work/$(basename "$project" .csproj)"
done
full="$work/Consumer/Consumer"
lean="$work/LeanConsumer/LeanConsumer"

# run PROVIDER DB REOPEN-WITH APP: one consumer run; its first line names the BlockDb it loaded, which must be this
# commit's build (not an older $version from a cache).
run() {
  echo "-- BlockDb__Provider=$1 ${3:+Consumer__ReopenWith=$3}"
  BlockDb__Provider="$1" BlockDb__DataSource="$2" Consumer__ReopenWith="${3:-}" "$4" | tee "$work/run.out"
  grep -q "^consumer: BlockDb $version+$commit," "$work/run.out" || { echo "the consumer did not load BlockDb $version+$commit" >&2; exit 1; }
}

step "consumer (BlockDb package): one index, each SQLite provider in turn, each reopening it with the next"
db="$work/consumer.db"
run MicrosoftData "$db" SystemData "$full"
run SystemData "$db" PInvoke "$full"
run PInvoke "$db" MicrosoftData "$full"

if [ -n "${BLOCKDB_TEST_POSTGRES:-}" ]; then
  step "consumer on PostgreSql"
  BlockDb__Provider=PostgreSql BlockDb__ConnectionString="$BLOCKDB_TEST_POSTGRES" "$full"
else
  step "consumer on PostgreSql: skipped (BLOCKDB_TEST_POSTGRES is not set)"
fi

step "a missing runtime piece: the consumer without System.Data.SQLite.dll, provider SystemData"
cp -r "$work/Consumer" "$work/Consumer-no-sds"
rm "$work/Consumer-no-sds/System.Data.SQLite.dll"
BlockDb__Provider=SystemData BlockDb__DataSource="$db" Consumer__Expect=ConfigurationError Consumer__ExpectMessage="System.Data.SQLite" \
  "$work/Consumer-no-sds/Consumer"

step "a missing runtime piece: the consumer without the native libe_sqlite3, each SQLite provider"
cp -r "$work/Consumer" "$work/Consumer-no-native"
rm -r "$work/Consumer-no-native/runtimes"
for provider in MicrosoftData SystemData PInvoke; do
  BlockDb__Provider="$provider" BlockDb__DataSource="$work/no-native.db" Consumer__Expect=ConfigurationError \
    Consumer__ExpectMessage="e_sqlite3|SQLitePCLRaw.bundle_e_sqlite3" "$work/Consumer-no-native/Consumer"
done
[ ! -e "$work/no-native.db" ] || { echo "a provider without its native library created $work/no-native.db" >&2; exit 1; }

step "lean consumer (BlockDb.Core + BlockDb.PInvoke)"
run PInvoke "$work/lean.db" "" "$lean"
BlockDb__Provider=MicrosoftData BlockDb__DataSource="$work/lean.db" Consumer__Expect=ConfigurationError "$lean"
if ls "$work/LeanConsumer" | grep -q -E '^(System\.Data\.SQLite|Npgsql|Microsoft\.Data\.Sqlite)\.dll$'; then
  echo "the lean consumer's output holds another provider's assemblies:" >&2
  ls "$work/LeanConsumer" >&2
  exit 1
fi

step "the blockdb tool from the feed"
dotnet tool install --tool-path "$work/tools" --add-source "$feed" BlockDb.Tool --version "$version"
# Three different files in 64 KiB blocks: a (5 blocks), b (a's first 2 blocks and 2 of its own), c (1 block):
# 8 distinct blocks, 3 blocksets, 10 entries.
mkdir -p "$work/tree/sub"
head -c 300000 /dev/urandom > "$work/tree/a.bin"
{ head -c 131072 "$work/tree/a.bin"; head -c 70000 /dev/urandom; } > "$work/tree/sub/b.bin"
echo "small file" > "$work/tree/sub/c.txt"
"$work/tools/blockdb" index "$work/tree" --db "$work/tool.db" --block-size 64KiB --progress none > "$work/index.out"
"$work/tools/blockdb" info --db "$work/tool.db" | tee "$work/info.out"
grep -q 'blocks / blocksets / entries .* 8 / 3 / 10 ' "$work/info.out" || { echo "blockdb info did not report 8 blocks, 3 blocksets, 10 entries" >&2; exit 1; }
"$work/tools/blockdb" info --help > /dev/null

echo "package-test: all passed in $((SECONDS - start)) s"
