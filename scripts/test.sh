#!/usr/bin/env bash
# README command 2: installs what is missing, builds with AddressSanitizer/UBSan, runs the whole CTest suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
build="${REDUCE_TEST_BUILD_DIR:-build-test}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDUCE_SANITIZE=ON -DREDUCE_BUILD_BENCH=OFF
cmake --build "$build" -j "$(nproc)"
# detect_leaks stays on; onnx's schema registry is reachable at exit, not leaked.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
