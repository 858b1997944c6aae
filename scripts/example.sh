#!/usr/bin/env bash
# README command 1: installs what is missing, builds `reduce`, and runs it on the bundled example model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j "$(nproc)" --target reduce
build/reduce info corpus/examples/tiny_attention.onnx
