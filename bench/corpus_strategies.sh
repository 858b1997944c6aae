#!/usr/bin/env bash
# The reducer on the generated corpus: checks, seconds and final size for the default strategy and
# the baselines (polygraphy-bisect, polygraphy-linear, ddmin), same oracle, same -j. Prints a
# Markdown table for bench/RESULTS.md.
# usage: bench/corpus_strategies.sh [BUILD_DIR (default build-bench)] [SIZES (10,100,1000)] [JOBS (2)] [STRATEGIES]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
sizes="${2:-10,100,1000}"
jobs="${3:-2}"
strategies="${4:-default polygraphy-bisect polygraphy-linear ddmin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" >/dev/null

field() {  # field FILE KEY [OCCURRENCE]: a number from our report.json layout
  grep -m"${3:-1}" "\"$2\":" "$1" | tail -1 | sed -E 's/.*: ([^,]*),?/\1/'
}

printf "| model | ground truth |"
for s in $strategies; do printf " %s: checks / s / nodes |" "$s"; done
printf "\n|---|---|"
for s in $strategies; do printf -- "---|"; done
printf "\n"
tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine kind ops nodes desc; do
  printf "| %s | %s |" "$model" "$ops"
  for s in $strategies; do
    out="$work/out-$s-${model%.onnx}"
    if "$build/reduce" "$work/corpus/$model" --engine "$engine" --strategy "$s" -j "$jobs" -o "$out" >/dev/null 2>&1; then
      checks=$(field "$out/report.json" checks)
      secs=$(field "$out/report.json" seconds)
      reduced=$(field "$out/report.json" nodes 2)
      minimal=$(field "$out/report.json" one_minimal)
      mark=""
      [ "$minimal" = "true" ] && mark="*"
      printf " %s / %.2f / %s%s |" "$checks" "$secs" "$reduced" "$mark"
    else
      printf " failed |"
    fi
  done
  printf "\n"
done
echo
echo "(* = 1-minimal; nodes exclude Constant nodes; -j $jobs)"
