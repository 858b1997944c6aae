#!/usr/bin/env bash
# Wall time of `reduce` and `reduce batch` under mpirun (loopback, oversubscribed) for several rank
# counts, one slot each, with a simulated 1-second engine: a cmd: engine whose command sleeps, then
# runs the model's real engine with `reduce run` (outputs where the cmd: template says; the oracle
# compares them with the reference). The sleep dominates each check, so that an oversubscribed
# 2-core machine measures the distribution, not the engine. Markdown for bench/RESULTS.md.
# usage: bench/mpi_scaling.sh [BUILD_DIR (build-rel)] [RANKS ("1 2 4 8")] [SECONDS (1)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-rel}" && pwd)"
ranks_list="${2:-1 2 4 8}"
delay="${3:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
# slow_engine.sh ENGINE MODEL INPUTS OUTPUTS: the engine run, after the simulated build time. One
# thread: 8 ranks share 2 cores.
printf '#!/bin/sh\nsleep %s\nexec "%s" run "$2" --engine "$1" --inputs "$3" --save-outputs "$4" --save-format pb --threads 1 >/dev/null\n' \
  "$delay" "$build/reduce" >"$work/slow_engine.sh"
slow() { echo "cmd:sh $work/slow_engine.sh $1 {model} {inputs} {outputs}"; }

# 16 corpus models (every fault at 10 and 30 nodes, the first 16), each on its own engine, slowed.
"$build/reduce-corpus" "$work/corpus" --sizes 10,30 --faults all >/dev/null
{
  printf 'model\tengine\n'
  tail -n +2 "$work/corpus/manifest.tsv" | head -16 | while IFS=$'\t' read -r model engine _; do
    printf '%s\t%s\n' "$model" "$(slow "$engine")"
  done
} >"$work/corpus/batch.tsv"
"$build/reduce-corpus" "$work/single" --sizes 100 --faults broadcast-batch1 >/dev/null
single="$work/single/$(tail -n +2 "$work/single/manifest.tsv" | cut -f1)"
single_engine="$(tail -n +2 "$work/single/manifest.tsv" | cut -f2)"

seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
json_number() { grep -m1 "\"$1\":" "$2" | sed -E 's/.*: ([0-9.]+).*/\1/'; }
echo "| ranks | single reduction: wall s | search s | checks | remote checks | model.onnx sha256 | batch of 16: wall s | batch speed-up | reduced | buckets | load before |"
echo "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
batch_one=""
for n in $ranks_list; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  "${mpirun[@]}" -n "$n" "$build/reduce" "$single" --engine "$(slow "$single_engine")" -j 1 -o "$work/single-$n" \
    >/dev/null 2>"$work/single-$n.txt"
  single_s=$(seconds_since "$start")
  report="$work/single-$n/report.json"
  sum=$(sha256sum "$work/single-$n/model.onnx" | cut -c1-12)
  start=$(date +%s.%N)
  "${mpirun[@]}" -n "$n" "$build/reduce" batch "$work/corpus/batch.tsv" -j 1 -o "$work/batch-$n" >"$work/batch-$n.txt" 2>&1
  batch_s=$(seconds_since "$start")
  batch_one="${batch_one:-$batch_s}"
  speedup=$(awk -v a="$batch_one" -v b="$batch_s" 'BEGIN { printf "%.1f", a / b }')
  reduced=$(grep -c '"status": "reduced"' "$work/batch-$n/summary.json")
  buckets=$(json_number buckets "$work/batch-$n/summary.json")
  search_s=$(awk -v s="$(json_number seconds "$report")" 'BEGIN { printf "%.1f", s }')
  echo "| $n | $single_s | $search_s | $(json_number checks "$report") |" \
    "$(json_number remote_checks "$report") | $sum | $batch_s | $speedup | $reduced | $buckets | $load |"
done
