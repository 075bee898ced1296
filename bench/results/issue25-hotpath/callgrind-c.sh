#!/usr/bin/env bash
# The C form (bench/native/blockdb_native.c --mode same --layout keymap) under callgrind at two op counts, as
# bench/results/issue25-find-gc/callgrind-c.sh, on this build's libe_sqlite3.
set -euo pipefail
w=/tmp/findgc/bench; out=/tmp/hp-c
lib=/tmp/hp-before/runtimes/linux-x64/native/libe_sqlite3.so
printf 'workload\tn1\tn2\tI1\tI2\tper_op\n' > $out/summary.tsv
for wl in select xor-select-insert; do
  batch=$([ $wl = select ] && echo 0 || echo 1000)
  declare -A I=()
  for n in 2000 22000; do
    db=$out/run.db; rm -f $db $db-*; cp $w/templates/prefill-v1-n100000-s42-KeyMap.db $db
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $w/native/blockdb-native --lib $lib --db $db --sql $w/native/sql-6855c133.txt \
      --data $w/data/$wl-n100000-o$n-w200-t1-s42-synthetic.bin --workload $wl --layout keymap --mode same --reads 0 --default-reads 256 \
      --read-ms 50 --batch $batch --threads 1 --shared 0 --group 1 --latency $out/lat --prefault-mb 0 > $out/$wl-$n.out 2> $out/$wl-$n.valgrind
    I[$n]=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' $out/$wl-$n.valgrind)
  done
  printf '%s\t2000\t22000\t%s\t%s\t%s\n' $wl ${I[2000]} ${I[22000]} $(( (I[22000]-I[2000])/20000 )) >> $out/summary.tsv
done
cat $out/summary.tsv
