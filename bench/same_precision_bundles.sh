#!/usr/bin/env bash
# Behaviour fingerprint of `reduce precision` for refactors, beyond same_results.sh's checks and
# sets: every strategy and direction, a strongly typed engine (fp16:ref), a tolerance sweep, and the
# Q/DQ search against the float model, each -j 1 on the precision and quantized corpus families;
# per run the exit code, the set, and SHA-256 of the printed lines, report.md and report.json
# (without `seconds`), and the files of the bundle. Paths are relative (the commands run in the work
# folder), so two runs on two commits must print the same table.
# usage: bench/same_precision_bundles.sh [BUILD_DIR (default build-test)] [SIZES (10,100)]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$build/reduce-corpus" p --precision all --sizes "$sizes" >/dev/null
"$build/reduce-corpus" q --quantized all --sizes "$sizes" >/dev/null

sha() { sha256sum | cut -c1-12; }
# run LABEL ARGS...: one row.
run() {
  local label="$1"
  shift
  rm -rf out
  "$build/reduce" precision "$@" -j 1 -o out >stdout 2>&1
  local rc=$?
  printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$label" "$rc" "$(paste -sd+ out/precision.txt 2>/dev/null)" \
    "$(sha <stdout)" "$(sha <out/report.md 2>/dev/null)" "$(grep -v '"seconds"' out/report.json 2>/dev/null | sha)" \
    "$(ls out 2>/dev/null | paste -sd' ')"
}

echo "| run | exit | set | stdout | report.md | report.json | files |"
echo "|---|---|---|---|---|---|---|"
tail -n +2 p/precision_manifest.tsv | while IFS=$'\t' read -r model engine _rest; do
  run "$model" "p/$model" --engine "$engine"
  run "$model fp16:ref" "p/$model" --engine fp16:ref
  run "$model sweep" "p/$model" --engine "$engine" --tolerance-sweep 0.5,0.01
  for strategy in polygraphy-bisect polygraphy-linear; do
    for direction in forward reverse; do
      run "$model $strategy $direction" "p/$model" --engine "$engine" --strategy "$strategy" --direction "$direction"
    done
  done
done
tail -n +2 q/quantized_manifest.tsv | while IFS=$'\t' read -r model float engine _rest; do
  run "$model" "q/$model" --engine "$engine" --float-model "q/$float"
  run "$model sweep" "q/$model" --engine "$engine" --float-model "q/$float" --tolerance-sweep 0.5,0.05
done
