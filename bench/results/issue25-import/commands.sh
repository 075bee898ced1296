#!/usr/bin/env bash
# The commands behind README.md (issue 25 item 2). BUILD: a copy of bench/BlockDb.Stress/bin/Release/net10.0 of the
# build to measure; C: the import-loop binary (make -f bench/native/Makefile import-loop SQLITE_DIR=$BUILD/runtimes/linux-x64/native IMPORT_OUT=$C).
set -eu
BUILD="${BUILD:?copy of the Stress build}"; C="${C:?import-loop binary}"; W="${W:-/tmp/issue25-import}"
mkdir -p "$W"
rm -f "$W"/empty.db*; dotnet "$BUILD/BlockDb.Stress.dll" import PInvoke "$W/empty.db" 0 1 >/dev/null  # an empty KeyMap file

# callgrind: instructions of a whole import of N rows, each side; per row = (I(300k) - I(100k)) / 200,000
for n in 100000 300000; do
  rm -f "$W"/b.db*
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 \
    valgrind --tool=callgrind --callgrind-out-file="$W/blockdb-$n.cg" dotnet "$BUILD/BlockDb.Stress.dll" import PInvoke "$W/b.db" $n 100000
  cp "$W/empty.db" "$W/c.db"; rm -f "$W"/c.db-wal "$W"/c.db-shm
  valgrind --tool=callgrind --callgrind-out-file="$W/c-$n.cg" "$C" "$W/c.db" $n 100000
done

# wall and CPU, whole process, paired (A = BlockDb, B = C), each run on a fresh file
cat > "$W/run-b.sh" <<B
#!/bin/sh
rm -f $W/fb-b.db $W/fb-b.db-wal $W/fb-b.db-shm $W/fb-b.db-blockdb-keymap
exec dotnet $BUILD/BlockDb.Stress.dll import PInvoke $W/fb-b.db "\$1" 100000 >> $W/fb-b-\$1.out 2>&1
B
cat > "$W/run-c.sh" <<B
#!/bin/sh
rm -f $W/fb-c.db $W/fb-c.db-wal $W/fb-c.db-shm; cp $W/empty.db $W/fb-c.db
exec $C $W/fb-c.db "\$1" 100000 >> $W/fb-c-\$1.out 2>&1
B
chmod +x "$W/run-b.sh" "$W/run-c.sh"
farm-bench -n 5 --timeout 800 --vs "$W/run-c.sh 1000000" -- "$W/run-b.sh" 1000000
farm-bench -n 3 --warmup 0 --timeout 1400 --vs "$W/run-c.sh 10000000" -- "$W/run-b.sh" 10000000
