#!/usr/bin/env bash
# cg.sh NAME BUILD_DIR : callgrind of a BlockDb import at 100k and 300k rows; per row = diff / 200k
set -eu
NAME=$1; BUILD=$2; W=/tmp/i25s29/cg; mkdir -p $W
[ -f /tmp/i25s29/empty.db ] || dotnet /tmp/i25s29/base/BlockDb.Stress.dll import PInvoke /tmp/i25s29/empty.db 0 1 >/dev/null
for n in 100000 300000; do
  rm -f $W/$NAME-$n.db*
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_PerfMapEnabled=1 \
    valgrind --tool=callgrind --callgrind-out-file=$W/$NAME-$n.cg dotnet $BUILD/BlockDb.Stress.dll import PInvoke $W/$NAME-$n.db $n 100000 > $W/$NAME-$n.out 2> $W/$NAME-$n.valgrind
  rm -f $W/$NAME-$n.db*
done
a=$(grep -m1 "^summary:\|^totals:" $W/$NAME-100000.cg | awk '{print $2}'); b=$(grep -m1 "^summary:\|^totals:" $W/$NAME-300000.cg | awk '{print $2}')
echo "$NAME per row: $(( (b - a) / 200000 ))" | tee $W/$NAME.perrow
