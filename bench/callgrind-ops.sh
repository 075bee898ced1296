#!/usr/bin/env bash
# Instructions per hot-path call, counted by valgrind's callgrind (repeatable on a shared machine, unlike time): the
# stress program's `ops` mode runs N1 and then N2 calls on a copy of the same KeyMap file, and
# (instructions(N2) - instructions(N1)) / (N2 - N1) is one call's cost with start-up, JIT, the map's load and the
# keys' set-up cancelled out. DOTNET_TieredCompilation=0 makes the JIT's work the same every run (every method
# compiled once, fully optimised, no tiering or dynamic PGO: not the default runtime, so compare builds with this
# script only against this script).
#
#   bash bench/callgrind-ops.sh <BlockDb.Stress.dll> <out-dir> [blocks=1000000] [n1=2000] [n2=22000] \
#        [providers=PInvoke,MicrosoftData,SystemData] [operations=find,sxi] [layout=KeyMap]
#
# The file operations (file-sxi, file-one: a file of 16 blocks by per-block calls or in one call) count files, not
# blocks: give n1/n2 of at most 4,000 (e.g. 200 1200).
#
# Prints one line per provider and operation and writes them, with each run's raw callgrind totals and the program's
# output, to <out-dir>. The filled file is kept in ${BLOCKDB_CALLGRIND_FILES:-/tmp/blockdb-callgrind} between runs.
set -euo pipefail

stress="$(realpath "$1")"
out="$2"
blocks="${3:-1000000}"
n1="${4:-2000}"
n2="${5:-22000}"
IFS=, read -r -a providers <<< "${6:-PInvoke,MicrosoftData,SystemData}"
IFS=, read -r -a operations <<< "${7:-find,sxi}"
layout="${8:-KeyMap}"
files="${BLOCKDB_CALLGRIND_FILES:-/tmp/blockdb-callgrind}"
mkdir -p "$out" "$files"

if [ "$layout" = KeyMap ]; then template="$files/filled-$blocks.db"; else template="$files/filled-$blocks-$layout.db"; fi
if [ ! -f "$template" ] || { [ "$layout" = KeyMap ] && [ ! -f "$template-blockdb-keymap" ]; }; then
  rm -f "$template" "$template"-*
  dotnet "$stress" fill PInvoke "$template" "$blocks" "$layout"
fi

# run PROVIDER OPERATION COUNT: prints the instructions collected
run() {
  local name="$1-$layout-$2-$3" work="$files/run.db"
  rm -f "$work" "$work"-*
  cp "$template" "$work"
  if [ "$layout" = KeyMap ]; then cp "$template-blockdb-keymap" "$work-blockdb-keymap"; fi
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    dotnet "$stress" ops "$1" "$work" "$blocks" "$2" "$3" "$layout" > "$out/$name.out" 2> "$out/$name.valgrind"
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out/$name.valgrind"
}

printf 'provider\toperation\tblocks\tn1\tn2\tinstructions_n1\tinstructions_n2\tinstructions_per_call\n' | tee "$out/summary.tsv"
for provider in "${providers[@]}"; do
  for operation in "${operations[@]}"; do
    i1="$(run "$provider" "$operation" "$n1")"
    i2="$(run "$provider" "$operation" "$n2")"
    per="$(( (i2 - i1) / (n2 - n1) ))"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$provider" "$operation" "$blocks" "$n1" "$n2" "$i1" "$i2" "$per" | tee -a "$out/summary.tsv"
  done
done
