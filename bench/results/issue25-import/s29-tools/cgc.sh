#!/usr/bin/env bash
set -eu
W=/tmp/i25s29/cg; mkdir -p $W
[ -f /tmp/i25s29/empty.db ] || dotnet /tmp/i25s29/base/BlockDb.Stress.dll import PInvoke /tmp/i25s29/empty.db 0 1 >/dev/null
for n in 100000 300000; do
  cp /tmp/i25s29/empty.db $W/c-$n.db; rm -f $W/c-$n.db-wal $W/c-$n.db-shm
  valgrind --tool=callgrind --callgrind-out-file=$W/c-$n.cg /tmp/i25s29/import-loop $W/c-$n.db $n 100000 > $W/c-$n.out 2> $W/c-$n.valgrind
  rm -f $W/c-$n.db*
done
a=$(grep -m1 "^summary:\|^totals:" $W/c-100000.cg | awk '{print $2}'); b=$(grep -m1 "^summary:\|^totals:" $W/c-300000.cg | awk '{print $2}')
echo "c per row: $(( (b - a) / 200000 ))" | tee $W/c.perrow
