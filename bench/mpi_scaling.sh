#!/usr/bin/env bash
# Wall time of `reduce` and `reduce batch` under mpirun (loopback, oversubscribed) for several rank
# counts, one slot each, with a simulated 1-second oracle: a check: script that sleeps, then calls
# the model interesting while it holds its fault's first op type (no CPU spent, so that an
# oversubscribed 2-core machine measures the distribution, not the engine). Markdown for bench/RESULTS.md.
# usage: bench/mpi_scaling.sh [BUILD_DIR (build-bench)] [RANKS ("1 2 4 8")] [SECONDS (1)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
ranks_list="${2:-1 2 4 8}"
delay="${3:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
printf '#!/bin/sh\nsleep "$1"\nif grep -q "$2" "$3"; then exit 1; fi\n' >"$work/check.sh"
check() { echo "check:sh $work/check.sh $delay $1 {model}"; }

# 16 corpus models (every fault at 10 and 30 nodes, the first 16) with their oracle.
"$build/reduce-corpus" "$work/corpus" --sizes 10,30 --faults all >/dev/null
{
  printf 'model\tengine\n'
  tail -n +2 "$work/corpus/manifest.tsv" | head -16 | while IFS=$'\t' read -r model _ _ ops _; do
    printf '%s\t%s\n' "$model" "$(check "${ops%%:*}")"
  done
} >"$work/corpus/batch.tsv"
"$build/reduce-corpus" "$work/single" --sizes 100 --faults broadcast-batch1 >/dev/null
single="$work/single/$(tail -n +2 "$work/single/manifest.tsv" | cut -f1)"

seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
echo "| ranks | single reduction: wall s | checks | model.onnx sha256 | batch of 16: wall s | reduced | buckets |"
echo "|---:|---:|---:|---|---:|---:|---:|"
for n in $ranks_list; do
  start=$(date +%s.%N)
  "${mpirun[@]}" -n "$n" "$build/reduce" "$single" --engine "$(check Mul)" -j 1 -o "$work/single-$n" >/dev/null 2>&1
  single_s=$(seconds_since "$start")
  checks=$(grep -m1 '"checks":' "$work/single-$n/report.json" | sed -E 's/.*: ([0-9]+).*/\1/')
  sum=$(sha256sum "$work/single-$n/model.onnx" | cut -c1-12)
  start=$(date +%s.%N)
  "${mpirun[@]}" -n "$n" "$build/reduce" batch "$work/corpus/batch.tsv" -j 1 -o "$work/batch-$n" >"$work/batch-$n.txt" 2>/dev/null
  batch_s=$(seconds_since "$start")
  reduced=$(grep -c '"status": "reduced"' "$work/batch-$n/summary.json")
  buckets=$(grep -m1 '^  "buckets":' "$work/batch-$n/summary.json" | sed -E 's/.*: ([0-9]+).*/\1/')
  echo "| $n | $single_s | $checks | $sum | $batch_s | $reduced | $buckets |"
done
