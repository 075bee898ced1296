#!/usr/bin/env bash
# Fetches Mono.Data.Sqlite.dll (Mono's port of System.Data.SQLite) from Debian's libmono-sqlite4.0-cil
# package into artifacts/mono-sqlite/. System.Data.SQLite itself does not restore from the package
# registry this project can reach (docs/DEPENDENCIES.md), so BlockDb.SystemData builds against this port.
# Only the managed DLL is taken; it runs on the e_sqlite3 library that SQLitePCLRaw ships, not on
# Debian's libsqlite3. Also keeps the Debian package's copyright file (Mono.Data.Sqlite is MIT-licensed, under its
# "Files: *" stanza), which the BlockDb.SystemData package ships beside the DLL. Idempotent: does nothing when both
# are already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/artifacts/mono-sqlite"
dll="$dest/Mono.Data.Sqlite.dll"
copyright="$dest/copyright"
[ -f "$dll" ] && [ -f "$copyright" ] && exit 0
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
sudo_cmd=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then sudo_cmd="sudo"; fi
if ! apt-get download libmono-sqlite4.0-cil >/dev/null 2>&1; then
  $sudo_cmd apt-get update -qq >/dev/null
  apt-get download libmono-sqlite4.0-cil >/dev/null
fi
dpkg-deb -x libmono-sqlite4.0-cil_*.deb x
found="$(find x -name Mono.Data.Sqlite.dll | head -n 1)"
[ -n "$found" ] || { echo "Mono.Data.Sqlite.dll not found in libmono-sqlite4.0-cil" >&2; exit 1; }
cp "$found" "$dll"
cp x/usr/share/doc/libmono-sqlite4.0-cil/copyright "$copyright"
ls libmono-sqlite4.0-cil_*.deb | sed 's/^/Mono.Data.Sqlite.dll from /' > "$dest/SOURCE.txt"
echo "Fetched $(cat "$dest/SOURCE.txt") into $dll"
