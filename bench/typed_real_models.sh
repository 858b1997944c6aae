#!/usr/bin/env bash
# Keep sets on a strongly typed FP16 engine (`fp16:ref`, as TensorRT 11 builds: each candidate
# converted at the ONNX level) on real models: PP-OCRv4 rec (npm) and the PyTorch 2.11 exports of
# ../shared/fixtures/exported (BERT, ViT, MobileNetV3, on their own recorded input sample). For each:
# whether FP16 fails at the tolerance, our 1-minimal set (size / checks / seconds), Model Optimizer
# AutoCast's default rule on the same values (size, passes), and Polygraphy-style prefix bisection
# (size / checks). Prints Markdown table rows for bench/RESULTS.md.
# usage: bench/typed_real_models.sh [BUILD_DIR (Release, default build-bench)] [TOLERANCE (1e-3)] [JOBS (2)] [ONLY]
#   TOLERANCE is both --atol and --rtol; ONLY: run only the models whose label contains it.
#   LIMIT (env, seconds, default 1200): each search is stopped (SIGTERM) after it; its best set so far
#   is then reported with "(stopped)".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
tol="${2:-1e-3}"
jobs="${3:-2}"
only="${4:-}"
limit="${LIMIT:-1200}"
npm="$("$root/corpus/fetch_models.sh" | tail -1)"
exported="$(cd "$root/../shared/fixtures/exported" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

# label|model|input options
cases=(
  "BERT (dynamo, opset 20)|$exported/bert_dynamo/model.onnx|--inputs $exported/bert_dynamo/test_data_set_0"
  "ViT (dynamo, external weights)|$exported/vit_dynamo_external/model.onnx|--inputs $exported/vit_dynamo_external/test_data_set_0"
  "MobileNetV3-small (dynamo)|$exported/mobilenetv3_dynamo/model.onnx|--inputs $exported/mobilenetv3_dynamo/test_data_set_0"
  "PP-OCRv4 rec 1x3x48x320|$npm/ppocr_rec.onnx|--input-shape x:1x3x48x320"
)
echo "| model | fp16:ref at $tol | float nodes | ours: set / checks / s | AutoCast rule: set, passes | polygraphy-bisect: set / checks / s |"
echo "|---|---|---:|---:|---|---:|"
for c in "${cases[@]}"; do
  IFS='|' read -r label model opts <<<"$c"
  [[ "$label" == *"$only"* ]] || continue
  code=0
  # shellcheck disable=SC2086  # opts is a list of options
  "$build/reduce" check "$model" $opts --engine fp16:ref --atol "$tol" --rtol "$tol" >"$work/check" 2>&1 || code=$?
  verdict=$(grep -m1 '^verdict:' "$work/check" | sed 's/verdict: //' || echo "exit $code")
  if [ "$code" != 1 ]; then
    printf "| %s | %s | - | - | - | - |\n" "$label" "$verdict"
    continue
  fi
  ours="$work/ours"; base="$work/base"
  rm -rf "$ours" "$base"
  # shellcheck disable=SC2086
  timeout --signal=TERM "$limit" "$build/reduce" precision "$model" $opts --engine fp16:ref --atol "$tol" --rtol "$tol" \
    -j "$jobs" -o "$ours" >"$work/ours.log" 2>&1 || true
  # shellcheck disable=SC2086
  timeout --signal=TERM "$limit" "$build/reduce" precision "$model" $opts --engine fp16:ref --atol "$tol" --rtol "$tol" \
    -j "$jobs" --strategy polygraphy-bisect -o "$base" >"$work/base.log" 2>&1 || true
  if [ -f "$ours/report.json" ]; then
    mine="$(grep -c . "$ours/precision.txt") / $(json "$ours/report.json" "r['checks']") / $(json "$ours/report.json" "round(r['seconds'], 1)")$(json "$ours/report.json" "' (stopped)' if r['stopped'] else ''")"
    rule="$(json "$ours/report.json" "len(r['autocast_rule']['fp32_nodes']) if r['autocast_rule'] else '-'"), $(json "$ours/report.json" "r['autocast_rule']['passes'] if r['autocast_rule'] else '-'")"
    candidates=$(json "$ours/report.json" "r['candidates']")
  else
    mine="$(tail -1 "$work/ours.log")"; rule="-"; candidates="-"
  fi
  if [ -f "$base/report.json" ]; then
    theirs="$(grep -c . "$base/precision.txt") / $(json "$base/report.json" "r['checks']") / $(json "$base/report.json" "round(r['seconds'], 1)")$(json "$base/report.json" "' (stopped)' if r['stopped'] else ''")"
  else
    theirs="$(tail -1 "$work/base.log")"
  fi
  printf "| %s | %s | %s | %s | %s | %s |\n" "$label" "$verdict" "$candidates" "$mine" "$rule" "$theirs"
done
