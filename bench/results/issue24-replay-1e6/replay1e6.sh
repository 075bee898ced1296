#!/bin/bash
# issue 24: replay at 1e6, one process per implementation, CPU time by /usr/bin/time, A B A B
cd /work/main
DLL=bench/BlockDb.Bench/bin/Release/net10.0/BlockDb.Bench.dll
cp -r bench/BlockDb.Bench/bin/Release/net10.0 /tmp/replay-bin
for impl in duplicati blockdb-inplace duplicati blockdb-inplace; do
  echo "=== $impl $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "TIME wall=%e user=%U sys=%S maxrss=%MkB" dotnet /tmp/replay-bin/BlockDb.Bench.dll duplicati-replay --blocks 1e6 --implementations $impl 2>&1
  echo "=== end $impl $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
