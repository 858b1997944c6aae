#!/usr/bin/env bash
# README command 2: installs what is missing, builds with AddressSanitizer/UBSan, runs the whole CTest suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
build="${REDUCE_TEST_BUILD_DIR:-build-test}"
# -Og -g1 with assertions on: compiles about 3x faster than -O2 -g under the sanitizers (the
# whole clean build fits CI's budget on 2 cores) and still checks every assert. The test drivers
# are not instrumented, only linked with the runtimes (tests/CMakeLists.txt says why).
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-Og -g1" \
  -DREDUCE_SANITIZE=ON -DREDUCE_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build "$build" -j "$(nproc)"
# detect_leaks stays on; onnx's schema registry is reachable at exit, not leaked.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One test more than cores: many tests wait on engine processes, workers and time limits rather
# than compute, and the whole suite passes under a load several times the core count.
ctest --test-dir "$build" --output-on-failure -j "$(( $(nproc) + 1 ))"
