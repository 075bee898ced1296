#!/usr/bin/env bash
# prof.sh DLL PROVIDER OP N TAG [LAYOUT]
set -euo pipefail
dll=$1; p=$2; op=$3; n=$4; tag=$5; layout=${6:-KeyMap}
f=/tmp/cg-callpath; work=/tmp/cg-callpath/prof/run-$tag.db
rm -f $work $work-*
if [ "$layout" = KeyMap ]; then cp $f/filled-100000.db $work; cp $f/filled-100000.db-blockdb-keymap $work-blockdb-keymap; else cp $f/filled-100000-$layout.db $work; fi
DOTNET_PerfMapEnabled=1 DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=/tmp/cg-callpath/prof/cg-$tag.out dotnet $dll ops $p $work 100000 $op $n $layout > /tmp/cg-callpath/prof/$tag.stdout 2> /tmp/cg-callpath/prof/$tag.valgrind
