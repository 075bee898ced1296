#!/bin/bash
# Per round, providers rotated: one process on the 1e8 template (open, first lookup, then per-op select and
# select-xor-insert), then one on a fresh copy of the 1e5 template (same). The 1e8 file is used in place (two 1e8
# files at most on disk; each run appends its ~40k new blocks).
big=/work/bigdata/keymap-1e8.db; small=/work/bigdata/keymap-1e5.db; rounds=$1; first=${2:-0}
M=/work/bigdata/mapload-bin3/BlockDb.MapLoad.dll
providers=(MicrosoftData SystemData)
for ((r=first; r<first+rounds; r++)); do
  for ((k=0; k<2; k++)); do
    p=${providers[$(( (r + k) % 2 ))]}
    for size in 1e8 1e5; do
      if [ $size = 1e8 ]; then db=$big; else rm -f /work/bigdata/k5run.db*; cp $small /work/bigdata/k5run.db; db=/work/bigdata/k5run.db; fi
      echo "RUN round=$((r+1)) provider=$p size=$size start=$(date +%T) load=$(cut -d' ' -f1 /proc/loadavg)"
      /usr/bin/time -f "TIME maxrss_kb=%M wall_s=%e user_s=%U sys_s=%S" dotnet $M once "$db" $p 50000 20000 $([ $size = 1e8 ] && echo 100000000 || echo 100000) 2>&1
      echo "END load=$(cut -d' ' -f1 /proc/loadavg) at=$(date +%T)"
    done
  done
done
rm -f /work/bigdata/k5run.db*
