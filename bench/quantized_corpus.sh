#!/usr/bin/env bash
# `reduce precision --float-model` on the quantized families (`reduce-corpus --quantized`) and on
# ONNX Runtime's INT8 BERT (../shared/fixtures/quantized/bert_int8_qdq against its float model at
# --atol 0.03 --rtol 0): per model, the quantized nodes, the default search (set, whether it is the
# ground truth, 1-minimal, sets checked, seconds at -j 1, the same set at -j 4) and Polygraphy-style
# bisection over a prefix of the quantized nodes (set size, sets checked). Prints a Markdown table.
# usage: bench/quantized_corpus.sh [BUILD_DIR (default build-bench)] [SIZES (10,100,1000,10000)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
sizes="${2:-10,100,1000,10000}"
fixtures="$root/../shared/fixtures"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --quantized all >/dev/null
field() { grep -m1 "\"$2\":" "$1" | sed -E 's/.*: ([^,]*),?/\1/'; }
echo "| model | nodes | quantized nodes | default: set (ground truth?) | 1-minimal | checks | s | -j 4 same | bisect: set size / checks |"
echo "|---|---|---|---|---|---|---|---|---|"
run() {  # model float truth extra-args...
  local model="$1" float="$2" truth="$3"
  shift 3
  "$build/reduce" precision "$model" --float-model "$float" -j 1 -o "$work/j1" "$@" >"$work/log" 2>&1 || { echo "| $(basename "$model") | error: $(tail -1 "$work/log") |"; return; }
  "$build/reduce" precision "$model" --float-model "$float" -j 4 -o "$work/j4" "$@" >/dev/null 2>&1 || true
  "$build/reduce" precision "$model" --float-model "$float" --strategy polygraphy-bisect -o "$work/bisect" "$@" >/dev/null 2>&1 || true
  local set
  set=$(paste -sd+ "$work/j1/precision.txt")
  local verdict="-"
  [ -n "$truth" ] && { [ "$set" = "$truth" ] && verdict="yes" || verdict="no"; }
  local same="no"
  cmp -s "$work/j1/precision.txt" "$work/j4/precision.txt" && same="yes"
  printf "| %s | %s | %s | %s (%s) | %s | %s | %.2f | %s | %s / %s |\n" "$(basename "$model" .onnx)" \
    "$("$build/reduce" info "$model" | sed -nE 's/^nodes: ([0-9]+).*/\1/p')" \
    "$(field "$work/j1/report.json" candidates)" "$set" "$verdict" "$(field "$work/j1/report.json" one_minimal)" \
    "$(field "$work/j1/report.json" checks)" "$(field "$work/j1/report.json" seconds)" "$same" \
    "$(wc -l <"$work/bisect/precision.txt" 2>/dev/null || echo -)" "$(field "$work/bisect/report.json" checks 2>/dev/null || echo -)"
  rm -rf "$work/j1" "$work/j4" "$work/bisect"
}
while IFS=$'\t' read -r model float _ _ truth _; do
  run "$work/corpus/$model" "$work/corpus/$float" "${truth//,/+}"
done < <(tail -n +2 "$work/corpus/quantized_manifest.tsv")
bert="$fixtures/quantized/bert_int8_qdq"
run "$bert/model.onnx" "$fixtures/exported/bert_dynamo/model.onnx" "" --inputs "$bert/test_data_set_0" --atol 0.03 --rtol 0
