#!/usr/bin/env bash
# Behaviour fingerprint of the reducer for refactors: on every corpus family at every size, each
# strategy's -j 1 reduction: checks, engine runs and the SHA-256 of the reproducer's model.onnx; then
# `reduce precision` on the precision families (checks and precision.txt). Two runs on two commits
# must print the same tables (bench/RESULTS.md, "Architecture: same results").
# usage: bench/same_results.sh [BUILD_DIR (default build-test)] [SIZES (10,100,1000)] [STRATEGIES (default)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100,1000}"
strategies="${3:-default}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" >/dev/null
"$build/reduce-corpus" "$work/precision" --precision all --sizes "$sizes" >/dev/null

field() {  # field FILE KEY [OCCURRENCE]: a number from our report.json layout
  grep -m"${3:-1}" "\"$2\":" "$1" | tail -1 | sed -E 's/.*: ([^,]*),?/\1/'
}

for strategy in $strategies; do
  echo "| model ($strategy) | checks | engine runs | nodes | model.onnx sha256 (first 16) |"
  echo "|---|---|---|---|---|"
  tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine _kind _ops _nodes _desc; do
    out="$work/out-$strategy-${model%.onnx}"
    if "$build/reduce" "$work/corpus/$model" --engine "$engine" --strategy "$strategy" -j 1 -o "$out" >/dev/null 2>&1; then
      printf "| %s | %s | %s | %s | %s |\n" "$model" "$(field "$out/report.json" checks)" \
        "$(field "$out/report.json" engine_runs)" "$(field "$out/report.json" nodes 2)" \
        "$(sha256sum "$out/model.onnx" | cut -c1-16)"
    else
      printf "| %s | failed | | | |\n" "$model"
    fi
  done
  echo
done
echo "| precision model | checks | FP32 set |"
echo "|---|---|---|"
tail -n +2 "$work/precision/precision_manifest.tsv" | while IFS=$'\t' read -r model engine _kind _set _nodes _desc; do
  out="$work/prec-${model%.onnx}"
  if "$build/reduce" precision "$work/precision/$model" --engine "$engine" -j 1 -o "$out" >/dev/null 2>&1; then
    printf "| %s | %s | %s |\n" "$model" "$(field "$out/report.json" checks)" "$(paste -sd+ "$out/precision.txt")"
  else
    printf "| %s | failed | |\n" "$model"
  fi
done
