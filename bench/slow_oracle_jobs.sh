#!/usr/bin/env bash
# Wall time of `reduce` with a simulated slow `cmd:` oracle (bench/slow_engine.sh: sleep, then the
# optimized engine with a fault) for several -j. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/slow_oracle_jobs.sh [BUILD_DIR (build-bench)] [SECONDS (1)] [JOBS ("1 4 16")] [FAMILY (broadcast-batch1)] [SIZE (100)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
delay="${2:-1}"
jobs_list="${3:-1 4 16}"
family="${4:-broadcast-batch1}"
size="${5:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$size" --faults "$family" >/dev/null
read -r model engine kind ops _ < <(tail -n +2 "$work/corpus/manifest.tsv")
spec="cmd:$root/bench/slow_engine.sh $delay $build/reduce $engine {model} {inputs} {outputs}"
echo "model: $model ($ops), oracle: cmd: sleep ${delay} s + reduce run --engine $engine"
echo
echo "| -j | wall s | checks | engine runs | reduced nodes | model.onnx sha256 |"
echo "|---|---:|---:|---:|---:|---|"
for j in $jobs_list; do
  out="$work/out-$j"
  start=$(date +%s.%N)
  "$build/reduce" "$work/corpus/$model" --engine "$spec" -j "$j" -o "$out" >/dev/null 2>&1
  end=$(date +%s.%N)
  checks=$(grep -m1 '"checks":' "$out/report.json" | sed -E 's/.*: ([0-9]+).*/\1/')
  hits=$(grep -m1 '"cache_hits":' "$out/report.json" | sed -E 's/.*: ([0-9]+).*/\1/')
  nodes=$(grep -m2 '"nodes":' "$out/report.json" | tail -1 | sed -E 's/.*: ([0-9]+).*/\1/')
  sum=$(sha256sum "$out/model.onnx" | cut -c1-12)
  printf "| %s | %.1f | %s | %s | %s | %s |\n" "$j" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$checks" "$((checks - hits))" "$nodes" "$sum"
done
