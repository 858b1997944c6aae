#!/usr/bin/env bash
# Wrong reproducers reported as confirmed with nothing said, on engines that fail at random (issue 69),
# and what the trust runs cost on them. Four engines, each a check: script seeded per trial (run K
# of trial T draws from awk's srand(T * 100000 + K)):
#   any30, any50, any70: fails on P% of its runs whatever the model (a 6-node model): every
#     reproducer is wrong;
#   tanh30: fails whenever the model has the Tanh (the real failure) and at random on 30% of its
#     runs besides (bert_dynamo, 84 nodes): a reproducer without the Tanh is wrong.
# For each engine, TRIALS reductions at -j JOBS with reduce's defaults, each outcome counted: exit 7
# (model-independent), 3 (the original passed), 6 (NOT CONFIRMED), 0 with a WARNING line, 0 right
# (tanh30: a reproducer with the Tanh, no warning), 0 silent and wrong. Also the mean engine runs
# per reduction (report.json engine_runs, the exit-0 rows) and how many reductions spent extra
# trust runs (report.json trust.reasons not empty; "-" for a build without it).
# Usage: bench/trust_rates.sh BUILD_DIR [TRIALS (96)] [JOBS (1)] [ENGINES ("any30 any50 any70 tanh30")]
set -euo pipefail
build="$(cd "${1:?usage: bench/trust_rates.sh BUILD_DIR [TRIALS] [JOBS] [ENGINES]}" && pwd)"
trials="${2:-96}"
jobs="${3:-1}"
engines="${4:-any30 any50 any70 tanh30}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixture="${REDUCE_EXPORTED_FIXTURES:-$here/../shared/fixtures/exported}/bert_dynamo"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/flaky_engines.sh
. "$(dirname "${BASH_SOURCE[0]}")/flaky_engines.sh"
write_chain_model "$work/m.onnxtxt"
write_flaky_script "$work/flaky.sh"
engine="check:sh $work/flaky.sh {model}"
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2" 2>/dev/null || echo -; }

printf '| engine | trials | exit 7 | exit 3 | exit 6 | exit 0 with a warning | exit 0 right | exit 0 silent and wrong | engine runs per exit-0 reduction | extra trust spent |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for e in $engines; do
  declare -A n=([7]=0 [3]=0 [6]=0 [warned]=0 [right]=0 [silent]=0 [other]=0 [runs]=0 [done]=0 [trust]=0)
  for t in $(seq 1 "$trials"); do
    run="$work/$e-t$t"
    mkdir -p "$run"
    echo "$t" > "$run/seed"
    case "$e" in
      any*) echo "${e#any}" > "$run/p"; model="$work/m.onnxtxt"; inputs=() ;;
      tanh*) echo "${e#tanh}" > "$run/p"; touch "$run/tanh"; model="$fixture/model.onnx"; inputs=(--inputs "$fixture/test_data_set_0") ;;
    esac
    set +e
    FLAKY_DIR="$run" "$build/reduce" "$model" --engine "$engine" --slot-env "FLAKY_DIR=$run" -j "$jobs" "${inputs[@]}" \
      -o "$run/out" > "$run/log" 2>&1
    code=$?
    set -e
    case "$code" in
      7|3|6) n[$code]=$((n[$code] + 1)) ;;
      0)
        n[done]=$((n[done] + 1))
        n[runs]=$((n[runs] + $(json "$run/out/report.json" "r['engine_runs']")))
        reasons=$(json "$run/out/report.json" "len(r['trust']['reasons'])")
        [ "$reasons" != - ] && [ "$reasons" -gt 0 ] && n[trust]=$((n[trust] + 1))
        [ "$reasons" = - ] && n[trust]=-
        if grep -q '^WARNING: ' "$run/log"; then n[warned]=$((n[warned] + 1))
        elif [ -e "$run/tanh" ] && grep -aq Tanh "$run/out/model.onnx"; then n[right]=$((n[right] + 1))
        else n[silent]=$((n[silent] + 1)); fi ;;
      *) n[other]=$((n[other] + 1)) ;;
    esac
  done
  mean=-
  [ "${n[done]}" -gt 0 ] && mean=$(awk -v a="${n[runs]}" -v b="${n[done]}" 'BEGIN { printf "%.1f", a / b }')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$e" "$trials" "${n[7]}" "${n[3]}" "${n[6]}" "${n[warned]}" \
    "${n[right]}" "${n[silent]}" "$mean" "${n[trust]}"
  [ "${n[other]}" -gt 0 ] && echo "($e: ${n[other]} reductions ended with another exit code)"
  unset n
done
