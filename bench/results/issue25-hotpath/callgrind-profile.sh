#!/usr/bin/env bash
# run.sh DLL PROVIDER OP N TAG: callgrind with dumped instrs + perf map
set -euo pipefail
dll=$1; p=$2; op=$3; n=$4; tag=$5
f=/tmp/cg-hotpath; work=/tmp/hp-prof/run-$tag.db
rm -f $work $work-*; cp $f/filled-100000.db $work; cp $f/filled-100000.db-blockdb-keymap $work-blockdb-keymap
DOTNET_PerfMapEnabled=1 DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=/tmp/hp-prof/cg-$tag.out dotnet $dll ops $p $work 100000 $op $n > /tmp/hp-prof/$tag.stdout 2> /tmp/hp-prof/$tag.valgrind
grep -o 'perf-[0-9]*' /dev/null || true
