#!/usr/bin/env bash
# Instructions per listed block of the seed harness's join (or any seed workload), counted by callgrind: the `seed`
# subcommand runs one side alone at n1 and at n2 blocks on a fresh copy of the same template, and
# (instructions(n2) - instructions(n1)) / (n2 - n1) is one block's cost with start-up, JIT, open, the map's load and
# the warm-up cancelled out. DOTNET_TieredCompilation=0 as in callgrind-ops.sh (every method compiled once, optimised);
# one warm-up round of the same size first (--jit-rounds 1, so each run does the work twice: the difference is divided
# by 2 (n2 - n1)). The "steady" column leaves out the runtime's one-time work (JIT, unwinding: a first async wait or
# exception compiled in one run of the pair only), named through the JIT's perf map by callgrind-attribute.py, which
# also lists where each block's instructions go: python3 bench/callgrind-attribute.py <out>/<side>-<n1> <out>/<side>-<n2> <ops>.
#
#   bash bench/callgrind-seed.sh <BlockDb.Bench.dll> <out-dir> [size=1e5] [workload=Join] [provider=PInvoke] \
#        [sides="seed;KeyMap"] [n1=2000] [n2=22000]
set -euo pipefail
bench="$(realpath "$1")"
out="$2"
size="${3:-1e5}"
workload="${4:-Join}"
provider="${5:-PInvoke}"
IFS=';' read -r -a sides <<< "${6:-seed;KeyMap}"
n1="${7:-2000}"
n2="${8:-22000}"
mkdir -p "$out"
work="${BLOCKDB_SEED_WORK:-/tmp/blockdb-seed-work}"
# builds the templates outside valgrind first
dotnet "$bench" seed --sizes "$size" --providers "$provider" --workloads "$workload" --sides seed \
  --ops 10 --warmup 1 -r 1 --jit-rounds 0 --work "$work" > /dev/null
here="$(dirname "$(realpath "$0")")"
run() {
  local name="${1// /-}-$2"
  DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcConcurrent=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_PerfMapEnabled=1 \
    valgrind --tool=callgrind --callgrind-out-file="$out/$name.cg" \
    dotnet "$bench" seed --sizes "$size" --providers "$provider" --workloads "$workload" \
    --sides "$1" --ops "$2" -r 1 --jit-rounds 1 --work "$work" > "$out/$name.out" 2> "$out/$name.valgrind"
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out/$name.valgrind"
}
printf 'size\tworkload\tprovider\tside\tn1\tn2\tinstructions_n1\tinstructions_n2\tinstructions_per_block\tsteady_per_block\n' | tee "$out/summary.tsv"
for side in "${sides[@]}"; do
  i1="$(run "$side" "$n1")"
  i2="$(run "$side" "$n2")"
  steady="$(python3 "$here/callgrind-attribute.py" "$out/${side// /-}-$n1" "$out/${side// /-}-$n2" "$(( 2 * (n2 - n1) ))" 0 | sed -n 's/.*steady[^:]*: \([0-9]*\)$/\1/p')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$workload" "$provider" "$side" "$n1" "$n2" "$i1" "$i2" "$(( (i2 - i1) / (2 * (n2 - n1)) ))" "$steady" | tee -a "$out/summary.tsv"
done
