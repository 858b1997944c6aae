#!/usr/bin/env bash
# A 30%-flaky engine (issue 35): a check: script that fails whenever the model has the Tanh (the
# real failure) and, besides, at random on 30% of its runs (seeded: run K of bench seed S draws
# from awk's srand(S * 100000 + K)). For each --repeat, reduces bert_dynamo (84 nodes) with -j 1 (so
# that a seed gives the same draws in the same order),
# then re-runs the reproducer 20 times on the same flaky script and counts its failures.
# Usage: bench/flaky_engine.sh BUILD_DIR [SEEDS...]   (default seeds 1 2 3)
set -euo pipefail
build="${1:?usage: bench/flaky_engine.sh BUILD_DIR [SEEDS...]}"
shift
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1 2 3)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixture="${REDUCE_EXPORTED_FIXTURES:-$here/../shared/fixtures/exported}/bert_dynamo"
model="$fixture/model.onnx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/flaky.sh" <<'SCRIPT'
#!/bin/sh
# $1: model; FLAKY_DIR holds the run counter and the seed.
n=$(( $(cat "$FLAKY_DIR/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$FLAKY_DIR/count"
if grep -aq Tanh "$1"; then echo 'engine: Tanh layer rejected'; exit 1; fi
r=$(awk -v s="$(cat "$FLAKY_DIR/seed")" -v n="$n" 'BEGIN { srand(s * 100000 + n); print (rand() < 0.3) ? 1 : 0 }')
if [ "$r" = 1 ]; then echo 'engine: Tanh layer rejected'; exit 1; fi
exit 0
SCRIPT
engine="check:sh $work/flaky.sh {model}"
printf '| --repeat | seed | exit | reproducer | engine runs | flaky checks | re-runs that fail (of 20) |\n|---|---|---|---|---|---|---|\n'
for repeat in 1 3 7; do
  for seed in "${seeds[@]}"; do
    run="$work/r$repeat-s$seed"
    mkdir -p "$run"
    echo "$seed" > "$run/seed"
    set +e
    FLAKY_DIR="$run" "$build/reduce" "$model" --engine "$engine" --slot-env "FLAKY_DIR=$run" -j 1 --repeat "$repeat" --inputs "$fixture/test_data_set_0" \
      -o "$run/out" > "$run/log" 2>&1
    code=$?
    set -e
    ops=$(grep -E '^reduced [0-9]+ ->' "$run/log" | sed 's/^reduced //; s/, 1-minimal//' || true)
    runs=$(grep -o '"engine_runs": [0-9]*' "$run/out/report.json" | head -1 | cut -d' ' -f2)
    flaky=$(grep -o '"flaky": [0-9]*' "$run/out/report.json" | head -1 | cut -d' ' -f2)
    fails=0
    for k in $(seq 1 20); do
      set +e
      FLAKY_DIR="$run" "$build/reduce" check "$run/out/model.onnx" --engine "$engine" --slot-env "FLAKY_DIR=$run" \
        --inputs "$run/out/inputs" > /dev/null 2>&1
      [ $? -eq 1 ] && fails=$((fails + 1))
      set -e
    done
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$repeat" "$seed" "$code" "$ops" "$runs" "$flaky" "$fails"
  done
done
