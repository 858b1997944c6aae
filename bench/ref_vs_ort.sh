#!/usr/bin/env bash
# Reference-engine latency against ONNX Runtime (onnxruntime-node 1.30) on the real npm models:
# same seeded inputs, same thread count, median of N runs each (after one warm-up run inside the
# median set). Prints a Markdown table for bench/RESULTS.md.
# usage: bench/ref_vs_ort.sh [BUILD_DIR (Release, default build-bench)] [THREADS (2)] [RUNS (10)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-bench}"
threads="${2:-2}"
runs="${3:-10}"
models="$("$root/corpus/fetch_models.sh" | tail -1)"
ort="$("$root/scripts/ort/install.sh" | tail -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# label|file|reduce run input options (same inputs as tests/adapters/ort_crosscheck_test.cpp)
cases=(
  "PP-OCRv4 det 1x3x64x64|ppocr_det.onnx|--input-shape x:1x3x64x64"
  "PP-OCRv4 det 1x3x640x640|ppocr_det.onnx|--input-shape x:1x3x640x640"
  "PP-OCRv4 rec 1x3x48x320|ppocr_rec.onnx|--input-shape x:1x3x48x320"
  "PP-OCRv4 cls 1x3x48x192|ppocr_cls.onnx|--input-shape x:1x3x48x192"
  "openwakeword hello_deepa|oww_hello_deepa.onnx|"
  "openwakeword hello_deepa_old|oww_hello_deepa_old.onnx|"
  "openwakeword namaste_deepa|oww_namaste_deepa.onnx|"
  "Silero VAD v5, 512 samples|silero_vad_v5.onnx|--input-shape input:1x512 --input-shape state:2x1x128 --input-range state:0,0 --input-range sr:16000,16000"
)

echo "| model | reference (ms) | ONNX Runtime (ms) | ratio |"
echo "|---|---:|---:|---:|"
for c in "${cases[@]}"; do
  IFS='|' read -r label file opts <<<"$c"
  rm -rf "$work/in" "$work/out"
  # shellcheck disable=SC2086  # opts is a list of options
  ref_line="$("$build/reduce" run "$models/$file" $opts --seed 2026 --threads "$threads" --repeat "$runs" \
              --save-inputs "$work/in" | tail -1)"
  ref_ms="$(sed -E 's/.*: (median )?([0-9.e+-]+) ms.*/\2/' <<<"$ref_line")"
  ort_line="$(node "$root/scripts/ort/run_ort.js" "$ort" "$models/$file" "$work/in" "$work/out" \
              --threads "$threads" --repeat "$runs" | tail -1)"
  ort_ms="$(sed -E 's/.*: (median )?([0-9.e+-]+) ms.*/\2/' <<<"$ort_line")"
  awk -v l="$label" -v r="$ref_ms" -v o="$ort_ms" 'BEGIN { printf "| %s | %.2f | %.2f | %.1fx |\n", l, r, o, r / o }'
done
