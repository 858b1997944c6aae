#!/usr/bin/env bash
# Engine runs per reduction (issue 36): on every corpus family and size, at -j 1 (counts are
# deterministic, so any build gives the same table), the default strategy against Polygraphy's
# bisection and linear baselines: engine runs, reproducer size, whether certified 1-minimal, the
# engine runs when the first reproducer within twice the final size was written, and whether the
# default stays within the issue's budget (polygraphy-bisect's runs + the reproducer's nodes).
# Prints a Markdown table for bench/RESULTS.md.
# usage: bench/engine_runs.sh [BUILD_DIR (default build-test)] [SIZES (10,100,1000)] [LINEAR_MAX (1000)]
#   LINEAR_MAX: polygraphy-linear (about as many runs as nodes) runs only on models of at most this
#   many nodes; "not run" otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100,1000}"
linear_max="${3:-1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" >/dev/null
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

echo "| model | default: runs / nodes / 1-min / first small at | polygraphy-bisect: runs / nodes | polygraphy-linear: runs / nodes | budget (bisect + nodes) | within |"
echo "|---|---|---|---|---:|---|"
tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine _kind _ops nodes_in _desc; do
  row="| $model |"
  declare -A runs=() nodes=()
  for s in default polygraphy-bisect polygraphy-linear; do
    if [ "$s" = polygraphy-linear ] && [ "$nodes_in" -gt "$linear_max" ]; then
      row="$row not run |"
      continue
    fi
    out="$work/out-$s-${model%.onnx}"
    if "$build/reduce" "$work/corpus/$model" --engine "$engine" --strategy "$s" -j 1 -o "$out" >/dev/null 2>&1; then
      runs[$s]=$(json "$out/report.json" "r['engine_runs']")
      nodes[$s]=$(json "$out/report.json" "r['reduced']['nodes']")
      if [ "$s" = default ]; then
        row="$row ${runs[$s]} / ${nodes[$s]} / $(json "$out/report.json" "'yes' if r['one_minimal'] else 'no'") / $(json "$out/report.json" "r['first_small_reproducer']['engine_runs'] if r['first_small_reproducer'] else '-'") |"
      else
        row="$row ${runs[$s]} / ${nodes[$s]} |"
      fi
    else
      runs[$s]=-; nodes[$s]=-
      row="$row failed |"
    fi
  done
  if [ "${runs[default]}" != - ] && [ "${runs[polygraphy-bisect]}" != - ]; then
    budget=$(( runs[polygraphy-bisect] + nodes[default] ))
    within=$([ "${runs[default]}" -le "$budget" ] && echo yes || echo "**no** (+$(( runs[default] - budget )))")
  else
    budget=-; within=-
  fi
  echo "$row $budget | $within |"
done
