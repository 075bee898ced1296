#!/usr/bin/env bash
# The C form of BlockDb's design (bench/native/blockdb_native.c --mode same --layout keymap: the key map, VerifyBlockId,
# the read and write batches) under callgrind at two op counts, on the files `bench limit --blocks 1e5 --ops 2000` and
# `--ops 22000` left in <work> (the same template; data files of 2,000 + 1,000 warm-up and 22,000 + 11,000 warm-up
# ops): per op = (I(big) - I(small)) / 30,000. As ../issue25-hotpath/callgrind-c.sh, with the paths found.
#   bash callgrind-c.sh <work> <out>
set -euo pipefail
w="$1"; out="$2"; mkdir -p "$out"
lib="$(ls "$w"/native/*.so 2>/dev/null | head -1 || true)"
[ -n "$lib" ] || lib="$(dirname "$(realpath "$0")")/../../BlockDb.Bench/bin/Release/net10.0/runtimes/linux-x64/native/libe_sqlite3.so"
sql="$(ls -t "$w"/native/sql-*.txt | head -1)"
template="$(ls "$w"/templates/prefill-*n100000*KeyMap.db | head -1)"
printf 'workload\tops_small\tops_big\tI_small\tI_big\tper_op\n' > "$out/summary.tsv"
for wl in select xor-select-insert; do
  batch=$([ $wl = select ] && echo 0 || echo 1000)
  declare -A I=()
  for n in 2000 22000; do
    data="$(ls "$w"/data/$wl-n100000-o$n-*.bin | head -1)"
    db="$out/run.db"; rm -f "$db" "$db"-*; cp "$template" "$db"
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$w/native/blockdb-native" --lib "$lib" --db "$db" --sql "$sql" \
      --data "$data" --workload $wl --layout keymap --mode same --reads 0 --default-reads 256 \
      --read-ms 50 --batch $batch --threads 1 --shared 0 --group 64 --latency "$out/lat" --prefault-mb 0 > "$out/$wl-$n.out" 2> "$out/$wl-$n.valgrind"
    I[$n]=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out/$wl-$n.valgrind")
  done
  printf '%s\t3000\t33000\t%s\t%s\t%s\n' $wl ${I[2000]} ${I[22000]} $(( (I[22000]-I[2000])/30000 )) >> "$out/summary.tsv"
done
rm -f "$out/run.db" "$out"/run.db-* "$out/lat"
cat "$out/summary.tsv"
