#!/usr/bin/env bash
# callgrind per call: (Ir(N2) - Ir(N1)) / (N2 - N1), as bench/callgrind-ops.sh, on a Duplicati file
set -euo pipefail
S=/tmp/dupmap/stress/BlockDb.Stress.dll
tpl=$1; blocks=$2; out=$3; shift 3
n1=2000; n2=22000
run() { # provider op layout count
  local w=/tmp/dupmap/cgrun-$1-$2-$3-$4.sqlite; rm -f $w $w-*; cp $tpl $w
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null dotnet $S ops $1 $w $blocks $2 $4 $3 > $out/$1-$2-$3-$4.out 2> $out/$1-$2-$3-$4.valgrind
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' $out/$1-$2-$3-$4.valgrind
}
printf 'provider\top\tlayout\tblocks\tIr_n1\tIr_n2\tIr_per_call\n' | tee $out/summary.tsv
for spec in "$@"; do
  IFS=: read p op l <<< "$spec"
  a=$(run $p $op $l $n1); b=$(run $p $op $l $n2)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $p $op $l $blocks $a $b $(( (b-a)/(n2-n1) )) | tee -a $out/summary.tsv
done
