#!/usr/bin/env bash
# Engine runs per reduction (issue 36; fixtures: issue 48): on every corpus family and size, and on
# the exported fixtures with a fault of bench/fixture_faults.tsv injected, at -j 1 (counts are
# deterministic, so any build gives the same table), the default strategy against Polygraphy's
# bisection and linear baselines: engine runs, reproducer size, whether certified 1-minimal, the
# engine runs when the first reproducer within twice the final size was written, and whether the
# default stays within the issue's budget (polygraphy-bisect's runs + the reproducer's nodes).
# Prints a Markdown table for bench/RESULTS.md.
# usage: bench/engine_runs.sh [BUILD_DIR (default build-test)] [SIZES (10,100,1000)] [LINEAR_MAX (1000)] [FAULTS (all)]
#   LINEAR_MAX: polygraphy-linear (about as many runs as nodes) runs only on models of at most this
#   many nodes; "not run" otherwise. FAULTS: the corpus families (reduce-corpus --faults), "none": no corpus.
#   FIXTURES (env): the fixture folder (default ../shared/fixtures/exported), "none": no fixtures;
#   FIXTURE_FAULTS (env): the table of a fault per fixture (default bench/fixture_faults.tsv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100,1000}"
linear_max="${3:-1000}"
faults="${4:-all}"
fixtures="${FIXTURES:-$root/../shared/fixtures/exported}"
table="${FIXTURE_FAULTS:-$root/bench/fixture_faults.tsv}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/reduction_cases.sh
. "$root/bench/reduction_cases.sh"
reduction_cases "$build" "$work" "$sizes" "$faults" "$fixtures" "$table" >"$work/cases"
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

echo "| model | default: runs / nodes / 1-min / first small at | polygraphy-bisect: runs / nodes | polygraphy-linear: runs / nodes | budget (bisect + nodes) | within |"
echo "|---|---|---|---|---:|---|"
while IFS=$'\t' read -r model path engine nodes_in inputs options; do
  row="| $model |"
  declare -A runs=() nodes=()
  for s in default polygraphy-bisect polygraphy-linear; do
    if [ "$s" = polygraphy-linear ] && [ "$nodes_in" -gt "$linear_max" ]; then
      row="$row not run |"
      continue
    fi
    out="$work/out-$s-$model"
    # shellcheck disable=SC2086  # inputs and options are lists of options
    if "$build/reduce" "$path" --engine "$engine" --strategy "$s" -j 1 $inputs $options -o "$out" </dev/null >/dev/null 2>&1; then
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
done <"$work/cases"
