#!/usr/bin/env bash
# Rounds and engine runs at -j 1/2/4/8/16 on every corpus family (issue 48), beside Polygraphy
# bisect's engine runs on the same boolean oracle: a `check:` script (bench/slow_check.sh) that
# sleeps SLEEP seconds, then says whether the engine fails. Rounds are counted as a dependency
# chain (docs/reducer.md, "Rounds"), not timed: a tiny sleep gives the same counts as a TensorRT
# build would, and only makes the runs overlap as slow ones do. Also checks that every -j gives the
# same reproducer (model.onnx byte for byte). Prints a Markdown table for bench/RESULTS.md.
# usage: bench/rounds.sh [BUILD_DIR (build-test)] [SIZES (100)] [SLEEP (0.05)] [JOBS ("1 2 4 8 16")] [FAULTS (all)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-100}"
sleep_s="${3:-0.05}"
jobs_list="${4:-1 2 4 8 16}"
faults="${5:-all}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --faults "$faults" >/dev/null
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

printf "| model | nodes | bisect: runs / nodes |"
for j in $jobs_list; do printf " -j %s: rounds / runs |" "$j"; done
printf " reproducer nodes | same for every -j |\n|---|---:|---|"
for j in $jobs_list; do printf -- "---|"; done
printf -- "---:|---|\n"
tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine _kind _ops nodes_in _desc; do
  check="check:$root/bench/slow_check.sh $sleep_s $build/reduce $engine {model} {inputs}"
  out="$work/bisect-${model%.onnx}"
  row="| ${model%.onnx} | $nodes_in |"
  if "$build/reduce" "$work/corpus/$model" --engine "$check" --strategy polygraphy-bisect -j 1 -o "$out" >/dev/null 2>&1; then
    row="$row $(json "$out/report.json" "r['engine_runs']") / $(json "$out/report.json" "r['reduced']['nodes']") |"
  else
    row="$row failed |"
  fi
  sums=""
  reduced=-
  for j in $jobs_list; do
    out="$work/j$j-${model%.onnx}"
    if "$build/reduce" "$work/corpus/$model" --engine "$check" -j "$j" -o "$out" >/dev/null 2>&1; then
      row="$row $(json "$out/report.json" "r['rounds']") / $(json "$out/report.json" "r['engine_runs']") |"
      sums="$sums $(sha256sum < "$out/model.onnx" | cut -c1-16)"
      reduced=$(json "$out/report.json" "r['reduced']['nodes']")
    else
      row="$row failed |"
      sums="$sums failed-$j"
    fi
  done
  same=$([ "$(echo $sums | tr ' ' '\n' | sort -u | wc -l)" = 1 ] && echo yes || echo "**no**")
  echo "$row $reduced | $same |"
done
