#!/usr/bin/env bash
# Instructions per blockset of a rebuild's blockset phase (bench recreate: ImportBlocksetsAsync against the plain C
# loop), counted by callgrind. Each side runs the whole rebuild and the blocks alone (--blocks-only) on streams of n1 and
# n2 blocks; ((all(n2) - blocks(n2)) - (all(n1) - blocks(n1))) / (files(n2) - files(n1)) is one blockset's cost with
# start-up, JIT, the stream's reading and the blocks' import cancelled out (the blocks' own cost per block is the
# blocks-only runs' difference). The share inside sqlite3_step (SQLite's own work) is read the same way from each run's
# inclusive cost of sqlite3_step. DOTNET_TieredCompilation=0 as in callgrind-ops.sh (every method compiled once).
# The .NET side's full runs also list every sampled blockset back (the oracle; all of them below 4,000 files): that
# listing is inside its per-blockset figure, and the .NET blocks-phase figure includes building the inputs from the
# stream (the C side's does not), so read the blockset figure as an upper bound and the blocks figure not at all.
#
#   bash bench/callgrind-recreate.sh <BlockDb.Bench.dll> <out-dir> [provider=PInvoke] [layout=KeyMap] [n1=10000] [n2=30000]
set -euo pipefail
bench="$(realpath "$1")"
out="$(mkdir -p "$2" && realpath "$2")"
provider="${3:-PInvoke}"
layout="${4:-KeyMap}"
n1="${5:-10000}"
n2="${6:-30000}"
work="${BLOCKDB_RECREATE_WORK:-/tmp/blockdb-recreate-cg}"
native_layout=$([ "$layout" = KeyMap ] && echo keymap || echo text)
lib="$(dirname "$bench")/runtimes/linux-x64/native/libe_sqlite3.so"
# streams, templates, the SQL file and the C program, outside valgrind
for n in "$n1" "$n2"; do
  dotnet "$bench" recreate --blocks "$n" --providers "$provider" --layouts "$layout" -r 1 --work "$work" -o "$out/plain-$n" > "$out/plain-$n.out"
done
sql="$(ls "$work"/native/sql-*.txt | head -1)"
files() { od -An -t d8 -j 16 -N 8 "$work/recreate-$1-42.bin" | tr -d ' '; }
collected() { sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$1"; }
step() { callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | grep -m1 ':sqlite3_step ' | awk '{gsub(",", "", $1); print $1}'; }
run_dotnet() { # n, blocks-only flag
  local name="$out/$provider-$1-$2"
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
    valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$name.cg" \
    dotnet "$bench" recreate --blocks "$1" --providers "$provider" --layouts "$layout" -r 1 --work "$work" -o "$name.d" \
    $([ "$2" = blocks ] && echo --blocks-only) > "$name.out" 2> "$name.valgrind"
  echo "$(collected "$name.valgrind") $(step "$name.cg")"
}
run_c() {
  local name="$out/C-$1-$2" db="$work/cg-c.db"
  local volumes=$(( ($1 + 499) / 500 ))
  rm -f "$db" "$db-wal" "$db-shm"
  cp "$work/recreate-$layout-${volumes}v.db" "$db"
  valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$name.cg" \
    "$work/native/blockdb-native" --lib "$lib" --db "$db" --sql "$sql" --stream "$work/recreate-$1-42.bin" \
    --workload recreate --layout "$native_layout" --batch 100000 --check-every 1000000 \
    --blocks-only "$([ "$2" = blocks ] && echo 1 || echo 0)" > "$name.out" 2> "$name.valgrind"
  echo "$(collected "$name.valgrind") $(step "$name.cg")"
}
f1="$(files "$n1")"; f2="$(files "$n2")"
printf 'side\tlayout\tn1\tn2\tfiles1\tfiles2\tinstr_per_block(blocks phase)\tinstr_per_blockset\tof which in sqlite3_step\n' | tee "$out/summary.tsv"
for side in C "$provider"; do
  fn=$([ "$side" = C ] && echo run_c || echo run_dotnet)
  read -r a1 s_a1 <<< "$($fn "$n1" all)"; read -r b1 s_b1 <<< "$($fn "$n1" blocks)"
  read -r a2 s_a2 <<< "$($fn "$n2" all)"; read -r b2 s_b2 <<< "$($fn "$n2" blocks)"
  per_block=$(( (b2 - b1) / (n2 - n1) ))
  per_set=$(( ((a2 - b2) - (a1 - b1)) / (f2 - f1) ))
  per_set_step=$(( ((s_a2 - s_b2) - (s_a1 - s_b1)) / (f2 - f1) ))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$side" "$layout" "$n1" "$n2" "$f1" "$f2" "$per_block" "$per_set" "$per_set_step" | tee -a "$out/summary.tsv"
done
