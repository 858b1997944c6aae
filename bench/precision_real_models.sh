#!/usr/bin/env bash
# `reduce precision` on the real npm models (PP-OCRv4 det and rec, Silero VAD v5) under opt:fp16 and
# opt:bf16 with a tight tolerance: whether the model fails, the set kept in FP32 (size, checks,
# seconds) by the default search and by the Polygraphy-style bisection from the inputs and from the
# outputs, -j 1. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/precision_real_models.sh [BUILD_DIR (Release, default build-bench)] [TOLERANCE (1e-3)] [JOBS (1)] [ONLY]
#   TOLERANCE is both --atol and --rtol; ONLY: run only the models whose label contains it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
tol="${2:-1e-3}"
jobs="${3:-1}"
only="${4:-}"
models="$("$root/corpus/fetch_models.sh" | tail -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
field() { grep -m1 "\"$2\":" "$1" | sed -E 's/.*: ([^,]*),?/\1/'; }

# label|file|input options (the inputs of bench/ref_vs_ort.sh)
cases=(
  "PP-OCRv4 det 1x3x64x64|ppocr_det.onnx|--input-shape x:1x3x64x64"
  "PP-OCRv4 rec 1x3x48x320|ppocr_rec.onnx|--input-shape x:1x3x48x320"
  "Silero VAD v5, 512 samples|silero_vad_v5.onnx|--input-shape input:1x512 --input-shape state:2x1x128 --input-range state:0,0 --input-range sr:16000,16000"
)
variants=("default forward" "polygraphy-bisect forward" "polygraphy-bisect reverse")
printf "| model | engine | check at %s | float nodes |" "$tol"
for v in "${variants[@]}"; do printf " %s: set / checks / s |" "$v"; done
printf "\n|---|---|---|---:|"
for _ in "${variants[@]}"; do printf -- "---:|"; done
printf "\n"
for c in "${cases[@]}"; do
  IFS='|' read -r label file opts <<<"$c"
  [[ "$label" == *"$only"* ]] || continue
  for engine in opt:fp16 opt:bf16; do
    code=0
    # shellcheck disable=SC2086  # opts is a list of options
    "$build/reduce" check "$models/$file" $opts --engine "$engine" --atol "$tol" --rtol "$tol" >"$work/check" 2>&1 || code=$?
    verdict=$(grep -m1 '^verdict:' "$work/check" | sed 's/verdict: //' || echo "exit $code")
    row=""
    candidates="-"
    for v in "${variants[@]}"; do
      read -r strategy direction <<<"$v"
      if [ "$code" != 1 ]; then row="$row - |"; continue; fi
      rm -rf "$work/out"
      pcode=0
      # shellcheck disable=SC2086
      "$build/reduce" precision "$models/$file" $opts --engine "$engine" --atol "$tol" --rtol "$tol" -j "$jobs" \
        --strategy "$strategy" --direction "$direction" -o "$work/out" >"$work/log" 2>&1 || pcode=$?
      case $pcode in
        0) candidates=$(field "$work/out/report.json" candidates)
           row="$row $(wc -l < "$work/out/precision.txt") / $(field "$work/out/report.json" checks) / $(printf %.1f "$(field "$work/out/report.json" seconds)") |" ;;
        4) row="$row fails even in FP32 |" ;;
        *) row="$row exit $pcode |" ;;
      esac
    done
    printf "| %s | %s | %s | %s |%s\n" "$label" "$engine" "$verdict" "$candidates" "$row"
  done
done
