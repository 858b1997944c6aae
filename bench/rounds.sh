#!/usr/bin/env bash
# Rounds and engine runs at -j 1/2/4/8/16 on every corpus family and on the exported fixtures with a
# fault of bench/fixture_faults.tsv injected (issue 48), beside Polygraphy bisect's engine runs on the
# same boolean oracle: a `check:` script (bench/slow_engine.sh --check) that sleeps SLEEP seconds,
# then says whether the engine fails. Rounds are counted as a dependency chain (docs/reducer.md,
# "Rounds"), not timed: a tiny sleep gives the same counts as a TensorRT build would, and only makes
# the runs overlap as slow ones do. Also checks that every -j gives the same reproducer (model.onnx
# byte for byte). Prints a Markdown table for bench/RESULTS.md.
# usage: bench/rounds.sh [BUILD_DIR (build-test)] [SIZES (100)] [SLEEP (0.05)] [JOBS ("1 2 4 8 16")] [FAULTS (all)]
#   FAULTS: the corpus families (reduce-corpus --faults), "none": no corpus.
#   FIXTURES (env): the fixture folder (default ../shared/fixtures/exported), "none": no fixtures;
#   FIXTURE_FAULTS (env): the table of a fault per fixture (default bench/fixture_faults.tsv);
#   CORPUS_SEED (env): the corpus generator's seed (bench/reduction_cases.sh).
# "checks" are the reducer's own tests of the first -j (report.json `checks`) against bisect's: the
# search alone, without the runs every reduction pays around it (the original's check, the probes,
# the confirming runs, and where the engine gave a reason more of them and the probes again).
# Bisect's runs are its search's (report.json engine_runs_by_purpose.search: the original's check
# and its checks; Polygraphy's bisect neither probes nor confirms); the last column is issue 69's
# -j 1 bound on reduce's engine runs, bisect's + the reproducer's nodes + 3.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-100}"
sleep_s="${3:-0.05}"
jobs_list="${4:-1 2 4 8 16}"
faults="${5:-all}"
fixtures="${FIXTURES:-$root/../shared/fixtures/exported}"
table="${FIXTURE_FAULTS:-$root/bench/fixture_faults.tsv}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/reduction_cases.sh
. "$root/bench/reduction_cases.sh"
reduction_cases "$build" "$work" "$sizes" "$faults" "$fixtures" "$table" >"$work/cases"
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

printf "| model | nodes | bisect: runs / nodes | checks: first -j / bisect |"
for j in $jobs_list; do printf " -j %s: rounds / runs |" "$j"; done
printf " reproducer nodes | same for every -j | -j 1 bound | first -j: engine work (x model nodes) |\n|---|---:|---|---|"
for j in $jobs_list; do printf -- "---|"; done
printf -- "---:|---|---:|---:|\n"
while IFS=$'\t' read -r model path engine nodes_in inputs options; do
  # The comparison's options (a tolerance) go to the check inside the script: its verdict is the oracle.
  check="check:$root/bench/slow_engine.sh --check $sleep_s $build/reduce $engine {model} {inputs}${options:+ $options}"
  out="$work/bisect-$model"
  # shellcheck disable=SC2086  # inputs is a list of options
  if "$build/reduce" "$path" --engine "$check" --strategy polygraphy-bisect -j 1 $inputs -o "$out" </dev/null >/dev/null 2>&1; then
    bisect_runs=$(json "$out/report.json" "r['engine_runs_by_purpose']['search'] if 'engine_runs_by_purpose' in r else r['engine_runs']")
    bisect="$bisect_runs / $(json "$out/report.json" "r['reduced']['nodes']")"
    bisect_checks=$(json "$out/report.json" "r['checks']")
  else
    bisect=failed
    bisect_runs=
    bisect_checks=failed
  fi
  cells=""
  sums=""
  checks=""
  work_x=""
  reduced=-
  for j in $jobs_list; do
    out="$work/j$j-$model"
    # shellcheck disable=SC2086
    if "$build/reduce" "$path" --engine "$check" -j "$j" $inputs -o "$out" </dev/null >/dev/null 2>&1; then
      cells="$cells $(json "$out/report.json" "r['rounds']") / $(json "$out/report.json" "r['engine_runs']") |"
      sums="$sums $(sha256sum < "$out/model.onnx" | cut -c1-16)"
      reduced=$(json "$out/report.json" "r['reduced']['nodes']")
      [ -n "$checks" ] || checks=$(json "$out/report.json" "r['checks']")
      [ -n "$work_x" ] || work_x=$(json "$out/report.json" "'%.1f' % r['engine_work']['x_model_nodes'] if 'engine_work' in r else '-'")
    else
      cells="$cells failed |"
      sums="$sums failed-$j"
    fi
  done
  same=$([ "$(echo $sums | tr ' ' '\n' | sort -u | wc -l)" = 1 ] && echo yes || echo "**no**")
  bound=-
  [ -n "$bisect_runs" ] && [ "$reduced" != - ] && bound=$((bisect_runs + reduced + 3))
  echo "| $model | $nodes_in | $bisect | ${checks:-failed} / $bisect_checks |$cells $reduced | $same | $bound | ${work_x:--} |"
done <"$work/cases"
