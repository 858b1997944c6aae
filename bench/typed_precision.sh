#!/usr/bin/env bash
# Keep sets on a strongly typed FP16 engine (`fp16:ref`: each candidate converted at the ONNX level,
# as TensorRT 11 builds it), on the precision corpus families: this search's 1-minimal set, Model
# Optimizer AutoCast's default rule on the same recorded values, and Polygraphy's prefix bisection
# from the inputs and from the outputs (suffix).
# Prints one Markdown table row per model: set sizes, checks, and whether AutoCast's set passes.
# usage: bench/typed_precision.sh [BUILD_DIR (default build-test)] [SIZES (10,100,1000)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100,1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/precision" --precision all --sizes "$sizes" >/dev/null

count() { grep -c . "$1" 2>/dev/null || echo 0; }
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

echo "| model | ground truth | ours: nodes / checks | AutoCast rule: nodes, passes | polygraphy-bisect: nodes / checks | polygraphy-bisect reverse: nodes / checks |"
echo "|---|---|---|---|---|---|"
tail -n +2 "$work/precision/precision_manifest.tsv" | while IFS=$'\t' read -r model _engine _kind set _nodes _desc; do
  truth=$(echo "$set" | tr ',' '\n' | grep -c .)
  ours="$work/ours-${model%.onnx}"
  base="$work/base-${model%.onnx}"
  back="$work/back-${model%.onnx}"
  "$build/reduce" precision "$work/precision/$model" --engine fp16:ref -j 1 -o "$ours" >/dev/null 2>&1 || true
  "$build/reduce" precision "$work/precision/$model" --engine fp16:ref --strategy polygraphy-bisect -j 1 -o "$base" >/dev/null 2>&1 || true
  "$build/reduce" precision "$work/precision/$model" --engine fp16:ref --strategy polygraphy-bisect --direction reverse -j 1 \
    -o "$back" >/dev/null 2>&1 || true
  printf "| %s | %s | %s / %s | %s, %s | %s / %s | %s / %s |\n" "$model" "$truth" \
    "$(count "$ours/precision.txt")" "$(json "$ours/report.json" "r['checks']")" \
    "$(json "$ours/report.json" "len(r['autocast_rule']['fp32_nodes'])")" "$(json "$ours/report.json" "r['autocast_rule']['passes']")" \
    "$(count "$base/precision.txt")" "$(json "$base/report.json" "r['checks']")" \
    "$(count "$back/precision.txt")" "$(json "$back/report.json" "r['checks']")"
done
