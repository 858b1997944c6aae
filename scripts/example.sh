#!/usr/bin/env bash
# README command 1: installs what is missing, builds `reduce`, and reduces a bundled corpus example:
# a 50-node transformer on which the optimized engine's fused attention gives NaN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
# The same configuration as scripts/package-deb.sh, which packages this build folder.
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_BENCH=OFF \
  "${launcher[@]}" >/dev/null
cmake --build build -j "$(nproc)" --target reduce
model=corpus/examples/attention_softmax_transformer_50.onnx
engine=$(awk -F'\t' -v m="$(basename "$model")" '$1 == m { print $2 }' corpus/examples/manifest.tsv)
echo "\$ build/reduce info $model | head -4"
build/reduce info "$model" | head -4
echo "\$ build/reduce check $model --engine $engine"
build/reduce check "$model" --engine "$engine" || true
echo "\$ build/reduce $model --engine $engine -o build/example.reduced"
rm -rf build/example.reduced
build/reduce "$model" --engine "$engine" -o build/example.reduced
echo "\$ cat build/example.reduced/report.md"
cat build/example.reduced/report.md
