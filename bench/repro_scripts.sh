#!/usr/bin/env bash
# The bundle's scripts as a maintainer runs them (issue 65): real engine bugs reduced with reduce,
# then each bundle's script run on the failing release, on a release (or program) that fixed the
# bug, and without the runtime. Prints a Markdown table of exit statuses for bench/RESULTS.md
# (docs/reference.md, "Reproduction scripts": 1 fails the way recorded, 0 passes, 3 another way,
# 2 cannot run).
# usage: [RUNS=5] bench/repro_scripts.sh [BUILD_DIR (default build-test)]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The releases the tests installed (reduce's own default is the user's cache folder).
export REDUCE_CACHE_DIR="${REDUCE_CACHE_DIR:-$root/.cache}"
build="${1:-$root/build-test}"
reduce="$build/reduce"
cache="$root/.cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3  # Debian's, with python3-opencv and python3-numpy

model() {  # NAME TEXT: an .onnxtxt model in the work folder
  printf '%s\n' "$2" > "$work/$1.onnxtxt"
  echo "$work/$1.onnxtxt"
}

runs="${RUNS:-5}"  # each script runs this often: an engine may crash one way and then another
status() {  # the exit statuses of RUNS runs of a command ("1 x5", "1 x4, 3 x1"), the last output in $work/last.log
  local codes=() k
  for ((k = 0; k < runs; ++k)); do
    "$@" > "$work/last.log" 2>&1
    codes+=("$?")
    if [ "${codes[-1]}" != 0 ] && [ "${codes[-1]}" != 1 ] && [ "${codes[-1]}" != 2 ]; then
      cp "$work/last.log" "$work/other-$k.log"
    fi
  done
  printf '%s\n' "${codes[@]}" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }'
}

node_with() {  # RELEASE_FOLDER SCRIPT
  status env PATH=/usr/bin:/bin NODE_PATH="$1/node_modules" node "$2"
}

row() { echo "| $1 | $2 | $3 | $4 | $5 | $6 |"; }

echo "| bug | engine reduced on | script | failing release | fixed release | without the runtime |"
echo "|---|---|---|---:|---:|---:|"

# onnxruntime-node up to 1.16.3: ReduceSum over an empty axis keeps the axis (shape [2,0,3]).
m=$(model empty_axis '<ir_version: 8, opset_import: ["" : 13]>
chain (float[2,4,3] x) => (float[2,1,3] y) {
  a = Relu (x)
  starts = Constant <value = int64[1] {0}> ()
  ax = Constant <value = int64[1] {1}> ()
  e = Slice (a, starts, starts, ax)
  r = ReduceSum <keepdims = 1> (e, ax)
  y = Sigmoid (r)
}')
"$reduce" "$m" --engine ort@1.16.3 -o "$work/b1" > /dev/null 2>&1
row "ReduceSum over an empty axis (shape)" "ort@1.16.3" "repro.mjs" \
  "$(node_with "$cache/ort-1.16.3" "$work/b1/repro.mjs") (1.16.3)" \
  "$(node_with "$cache/ort" "$work/b1/repro.mjs") (1.30.0)" "$(node_with "$work/none" "$work/b1/repro.mjs")"

# The same bug in onnxruntime-web 1.16.3's wasm build (installed on demand; fixed in 1.30.0).
"$reduce" "$m" --engine ort-web@1.16.3 -o "$work/b1w" > /dev/null 2>&1
row "ReduceSum over an empty axis (shape), wasm" "ort-web@1.16.3" "repro.mjs" \
  "$(node_with "$cache/ort-web-1.16.3" "$work/b1w/repro.mjs") (web 1.16.3)" \
  "$(node_with "$cache/ort-web" "$work/b1w/repro.mjs") (web 1.30.0)" "$(node_with "$work/none" "$work/b1w/repro.mjs")"

# onnxruntime-node 1.14.0: Pad with a negative axis aborts (double free), 1.16.3 runs it.
m=$(model pad '<ir_version: 8, opset_import: ["" : 18]>
pad (float[2,3] x) => (float[2,5] y) {
  pads = Constant <value = int64[2] {1, 1}> ()
  cv = Constant <value = float {0}> ()
  axes = Constant <value = int64[1] {-1}> ()
  y = Pad <mode = "constant"> (x, pads, cv, axes)
}')
"$reduce" "$m" --engine ort@1.14.0 --reference ort -o "$work/b2" > /dev/null 2>&1
row "Pad with a negative axis (crash, signal 6)" "ort@1.14.0" "repro.mjs" \
  "$(node_with "$cache/ort-1.14.0" "$work/b2/repro.mjs") (1.14.0)" \
  "$(node_with "$cache/ort-1.16.3" "$work/b2/repro.mjs") (1.16.3)" "$(node_with "$work/none" "$work/b2/repro.mjs")"

# onnxruntime-node 1.10-1.16: ReverseSequence reverses a batch entry of length 0 anyway.
m=$(model revseq '<ir_version: 8, opset_import: ["" : 13]>
revseq (float[4,2,3] x) => (float[4,2,3] y) {
  lens = Constant <value = int64[2] {0, 3}> ()
  y = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens)
}')
"$reduce" "$m" --engine ort@1.16.3 -o "$work/b3" > /dev/null 2>&1
row "ReverseSequence of length 0 (mismatch)" "ort@1.16.3" "repro.mjs" \
  "$(node_with "$cache/ort-1.16.3" "$work/b3/repro.mjs") (1.16.3)" \
  "$(node_with "$cache/ort" "$work/b3/repro.mjs") (1.30.0)" "$(node_with "$work/none" "$work/b3/repro.mjs")"

# The same bug through a cmd: engine: docs/examples/ort_adapter.mjs writes outputs.npz.
engine="cmd:node $root/docs/examples/ort_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}"
NODE_PATH="$cache/ort-1.16.3/node_modules" "$reduce" "$work/empty_axis.onnxtxt" --engine "$engine" -o "$work/b4" > /dev/null 2>&1
row "ReduceSum over an empty axis, cmd: adapter" "cmd:node ort_adapter.mjs (1.16.3)" "repro.sh" \
  "$(status env PATH=/usr/bin:/bin NODE_PATH="$cache/ort-1.16.3/node_modules" sh "$work/b4/repro.sh") (1.16.3)" \
  "$(status env PATH=/usr/bin:/bin NODE_PATH="$cache/ort/node_modules" sh "$work/b4/repro.sh") (1.30.0)" \
  "$(status env PATH=/usr/bin:/bin NODE_PATH="$work/none" sh "$work/b4/repro.sh")"

# ONNX.js 0.1.8 on Silero VAD v5 (docs/examples/onnxjs_adapter.mjs); the fixed "release": the ONNX
# Runtime adapter on the bundle's model.
if [ -d "$cache/onnxjs/node_modules/onnxjs" ] && [ -f "$cache/models/silero_vad_v5.onnx" ]; then
  engine="cmd:node $root/docs/examples/onnxjs_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}"
  NODE_PATH="$cache/onnxjs/node_modules" "$reduce" "$cache/models/silero_vad_v5.onnx" --engine "$engine" \
    --input-shape input:1x512 --input-shape state:2x1x128 --input-range state:0,0 --input-range sr:16000,16000 \
    -o "$work/b5" > /dev/null 2>&1
  sed "s|onnxjs_adapter.mjs|ort_adapter.mjs|" "$work/b5/repro.sh" > "$work/b5/repro_ort.sh"
  row "Silero VAD v5 on ONNX.js 0.1.8" "cmd:node onnxjs_adapter.mjs" "repro.sh" \
    "$(status env PATH=/usr/bin:/bin NODE_PATH="$cache/onnxjs/node_modules" sh "$work/b5/repro.sh") (0.1.8)" \
    "$(status env PATH=/usr/bin:/bin NODE_PATH="$cache/ort/node_modules" sh "$work/b5/repro_ort.sh") (ORT 1.30.0)" \
    "$(status env PATH=/usr/bin:/bin NODE_PATH="$work/none" sh "$work/b5/repro.sh")"
fi

# OpenCV 4.6 (Debian): an Identity whose input is a weight in a TorchScript BERT export.
fixture="$root/../shared/fixtures/exported/bert_torchscript_op17"
if [ -d "$fixture" ]; then
  "$reduce" "$fixture/model.onnx" --engine opencv --inputs "$fixture/test_data_set_0" -j 2 -o "$work/b6" > /dev/null 2>&1
  # No OpenCV release here fixes it: ONNX Runtime's Python stand-in is not cv2, so "fixed" is not measured.
  row "TorchScript BERT, Identity of a weight" "opencv (4.6.0)" "repro.py" \
    "$(status "$py" "$work/b6/repro.py") (cv2 4.6.0)" "—" \
    "$(status env -i PATH=/usr/bin:/bin PYTHONNOUSERSITE=1 "$py" -S "$work/b6/repro.py")"
fi

# Runs that gave another status than 0, 1 or 2: what they printed (stderr, not the table).
for f in "$work"/other-*.log; do
  [ -e "$f" ] || continue
  { echo "--- a run with another status:"; tail -5 "$f"; } >&2
done
