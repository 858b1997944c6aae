#!/usr/bin/env bash
# Flaky engines that fail on ANY model (issue 46): a check: script that fails at random on P% of its
# runs, whatever the model (seeded: run K of trial T draws from awk's srand(T * 100000 + K)). Every
# reproducer of such an engine is wrong; the question is whether reduce says so. For each P and
# --repeat, TRIALS reductions of a 6-node model at -j 1, each outcome counted: exit 7 (model-
# independent: the probes failed alike), 3 (the original passed), 6 (NOT CONFIRMED), 0 with a
# warning (a probe failed alike, before or after the search, or --repeat saw two verdicts on one model), and 0 silent (a wrong reproducer reported as confirmed).
# Usage: bench/flaky_any_model.sh BUILD_DIR [TRIALS (8)] [CONFIRM (default: no --confirm, reduce's default:
# 1 run, 3 for a reproducer of 1-2 nodes)]
set -euo pipefail
build="$(cd "${1:?usage: bench/flaky_any_model.sh BUILD_DIR [TRIALS]}" && pwd)"
trials="${2:-8}"
confirm="${3:-default}"
confirm_flag=()
[ "$confirm" = default ] || confirm_flag=(--confirm "$confirm")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/flaky_engines.sh
. "$(dirname "${BASH_SOURCE[0]}")/flaky_engines.sh"
write_chain_model "$work/m.onnxtxt"
write_flaky_script "$work/flaky.sh"
engine="check:sh $work/flaky.sh {model}"
printf '| failure rate | --repeat | --confirm | trials | exit 7 (model-independent) | exit 3 (passes) | exit 6 (NOT CONFIRMED) | exit 0 with a warning (probe or flaky) | exit 0 silent (wrong and unsaid) |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for p in 30 50 70; do
  for repeat in 1 3; do
    declare -A n=([7]=0 [3]=0 [6]=0 [warned]=0 [silent]=0 [other]=0)
    for t in $(seq 1 "$trials"); do
      run="$work/p$p-r$repeat-t$t"
      mkdir -p "$run"
      echo "$t" > "$run/seed"
      echo "$p" > "$run/p"
      set +e
      FLAKY_DIR="$run" "$build/reduce" "$work/m.onnxtxt" --engine "$engine" --slot-env "FLAKY_DIR=$run" -j 1 \
        --repeat "$repeat" "${confirm_flag[@]}" -o "$run/out" > "$run/log" 2>&1
      code=$?
      set -e
      case "$code" in
        7|3|6) n[$code]=$((n[$code] + 1)) ;;
        0) if grep -q '^WARNING: ' "$run/log"; then n[warned]=$((n[warned] + 1)); else n[silent]=$((n[silent] + 1)); fi ;;
        *) n[other]=$((n[other] + 1)) ;;
      esac
    done
    printf '| %s%% | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$repeat" "$confirm" "$trials" "${n[7]}" "${n[3]}" "${n[6]}" "${n[warned]}" "${n[silent]}"
    unset n
  done
done
