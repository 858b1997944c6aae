#!/usr/bin/env bash
# Candidates ONNX's checker refuses (issue 66): every reduction of the corpus (plain; in an If and in a
# Loop, kept as they are so that their bodies are reduced) on an external engine, `isolated:SPEC` (the
# same engine in a worker process: every candidate passes ONNX's checker before it runs), and of the real
# models on the real engines. Prints a Markdown table of the sums of report.json's `refused_by_checker`
# and `invalid` for bench/RESULTS.md.
# usage: bench/valid_candidates.sh [BUILD_DIR (default build-test)] [SIZES (10,100)] [JOBS (2)]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The releases the tests installed (reduce's own default is the user's cache folder).
export REDUCE_CACHE_DIR="${REDUCE_CACHE_DIR:-$root/.cache}"
build="$(cd "${1:-$root/build-test}" && pwd)"
sizes="${2:-10,100}"
jobs="${3:-2}"
reduce="$build/reduce"
cache="$root/.cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# report.json's counts of a bundle: "refused invalid nodes"
counts() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["refused_by_checker"], r["invalid"], r["reduced"]["nodes"])' "$1/report.json" 2>/dev/null ||
    echo "- - -"
}

# One set of reductions: NAME, then lines "MODEL<TAB>ENGINE<TAB>OPTIONS..." on stdin.
run_set() {
  local name="$1" n=0 refused=0 invalid=0 failed=0 model engine options
  while IFS=$'\t' read -r model engine options; do
    n=$((n + 1))
    local out="$work/out-$n"
    # shellcheck disable=SC2086 # options are words
    "$reduce" "$model" --engine "$engine" -j "$jobs" -o "$out" $options > /dev/null 2>&1
    read -r r i nodes < <(counts "$out")
    if [ "$r" = "-" ]; then failed=$((failed + 1)); continue; fi
    refused=$((refused + r))
    invalid=$((invalid + i))
    [ "$r" != 0 ] && echo "  $model on $engine: $r refused by the checker" >&2
    rm -rf "$out"
  done
  echo "| $name | $n | $((n - failed)) | $refused | $invalid |"
}

echo "| reductions | models | bundles | refused by ONNX's checker | invalid in all |"
echo "|---|---:|---:|---:|---:|"
for variant in plain if loop; do
  flag=""; keep=""
  [ "$variant" = if ] && flag="--in-if" && keep="--no-inline-if"
  [ "$variant" = loop ] && flag="--in-loop" && keep="--no-unroll-loops"
  # shellcheck disable=SC2086
  "$build/reduce-corpus" "$work/$variant" --sizes "$sizes" --faults all $flag > /dev/null
  tail -n +2 "$work/$variant/manifest.tsv" | while IFS=$'\t' read -r model engine _; do
    printf '%s\tisolated:%s\t%s\n' "$work/$variant/$model" "$engine" "$keep"
  done | run_set "corpus ($variant, sizes $sizes) on isolated:ENGINE"
done

# Real models, real engines (inputs at a real size: the model's own declaration stays dynamic).
models="$cache/models"
if [ -f "$models/ppocr_cls.onnx" ]; then
  "$reduce" run "$models/ppocr_cls.onnx" --input-shape x:1x3x48x192 --save-inputs "$work/cls" > /dev/null 2>&1
  "$reduce" run "$models/ppocr_rec.onnx" --input-shape x:1x3x48x320 --save-inputs "$work/rec" > /dev/null 2>&1
  {
    printf '%s\topencv\t--inputs %s\n' "$models/ppocr_cls.onnx" "$work/cls/input_0.pb"
    printf '%s\topencv\t--inputs %s\n' "$models/ppocr_rec.onnx" "$work/rec/input_0.pb"
    printf '%s\topencv\t--input-shape x:1x3x160x160\n' "$models/ppocr_det.onnx"
    printf '%s\topencv\t\n' "$models/oww_hello_deepa.onnx"
    printf '%s\topencv\t--inputs %s\n' "$root/../shared/fixtures/exported/bert_torchscript_op17/model.onnx" \
      "$root/../shared/fixtures/exported/bert_torchscript_op17/test_data_set_0"
  } | run_set "real models on opencv (OpenCV 4.6)"
fi
revif="$work/revif.onnxtxt"
cat > "$revif" <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
revif (float[4,2,3] x) => (float[4,2,3] y) {
  s = ReduceSum <keepdims = 0> (x)
  zero = Constant <value = float {-1000}> ()
  c = Greater (s, zero)
  y = If (c) <
    then_branch = t () => (float[4,2,3] a) {
      lens = Constant <value = int64[2] {0, 3}> ()
      r = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens)
      a = Relu (r)
    },
    else_branch = e () => (float[4,2,3] b) {
      lens2 = Constant <value = int64[2] {0, 3}> ()
      b = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens2)
    }
  >
}
EOF
if [ -d "$cache/ort-1.16.3/node_modules" ]; then
  printf '%s\tcheck:%s check {model} --engine ort@1.16.3 --inputs {inputs}\t--no-inline-if\n' "$revif" "$reduce" |
    run_set "ReverseSequence in an If, check: on onnxruntime-node 1.16.3"
fi
echo
echo "(-j $jobs; a reduction that wrote no bundle is counted in models, not in bundles)"
