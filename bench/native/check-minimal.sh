#!/usr/bin/env bash
# Checks the harness's C select figures against minimal_select.c (a standalone loop that shares nothing with the
# harness but the library and the file): the harness's C program in plain mode (one read transaction) and in
# BlockDb's design (read batches of 256), and the minimal loop, each on a fresh copy of the same template,
# interleaved and rotated per repetition. Run the harness once first (any select run at SIZE with OPS/WARMUP),
# so the template, the data file, the SQL file and the C binary exist in WORK.
#
#   bench/native/check-minimal.sh WORK SIZE OPS WARMUP [REPS] [LAYOUT]
#   bench/native/check-minimal.sh /tmp/bdb-native-work 1000000 100000 20000 9
# prints one line per run (rep, kind, ops/s) and the median, min and max per kind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work=$1 size=$2 ops=$3 warmup=$4 reps=${5:-7} layout=${6:-TextHash}
lib=${LIB:-$here/../BlockDb.Bench/bin/Release/net10.0/runtimes/linux-x64/native/libe_sqlite3.so}
suffix=$([ "$layout" = TextHash ] && echo "" || echo "-$layout")
template="$work/templates/prefill-v1-n$size-s42$suffix.db"
data="$work/data/select-n$size-o$ops-w$warmup-t1-s42-synthetic.bin"
sql=$(grep -l "journal_mode = WAL" "$work"/native/sql-*.txt | head -1)
native="$work/native/blockdb-native"
case $layout in TextHash) clayout=text ;; BlobHash) clayout=blob ;; *) echo "minimal_select finds by the (Hash, Size) index: TextHash or BlobHash" >&2; exit 2 ;; esac
for f in "$lib" "$template" "$data" "$sql" "$native"; do [ -e "$f" ] || { echo "missing $f (run the harness first)" >&2; exit 2; }; done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cc -O2 -std=c11 -o "$scratch/minimal_select" "$here/minimal_select.c" -Wl,--no-as-needed -lm -ldl

run() { # kind -> ops/s on a fresh copy
  cp "$template" "$scratch/db"
  case $1 in
    minimal) "$scratch/minimal_select" "$lib" "$scratch/db" "$ops" "$warmup" | sed -E 's/.*ops_per_s=([0-9]+).*/\1/' ;;
    *) "$native" --lib "$lib" --db "$scratch/db" --sql "$sql" --data "$data" --workload select --layout "$clayout" --mode "$1" \
         --batch 0 --latency "$scratch/lat" --prefault-mb 256 \
         | awk -F= '$1=="elapsed_ns"{e=$2} $1=="ops"{o=$2} $1=="error"{print "error: " $2 > "/dev/stderr"; exit 1} END{printf "%.0f\n", o*1e9/e}' ;;
  esac
  rm -f "$scratch"/db*
}

kinds=(minimal plain same)
results="$scratch/results"
for ((rep = 1; rep <= reps; rep++)); do
  for ((i = 0; i < 3; i++)); do
    kind=${kinds[$(((i + rep - 1) % 3))]}
    value=$(run "$kind")
    echo "$rep $kind $value" | tee -a "$results"
  done
done

for kind in "${kinds[@]}"; do
  awk -v k="$kind" '$2==k{print $3}' "$results" | sort -n | awk -v k="$kind" '{v[NR]=$1} END{m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%-8s median %.0f ops/s  min %.0f  max %.0f  (%d runs)\n", k, m, v[1], v[NR], NR}'
done
