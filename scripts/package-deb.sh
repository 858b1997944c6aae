#!/usr/bin/env bash
# Builds reduce's Debian package into OUT (default: dist/): a Release build in build/ (the folder
# README command 1 builds), then CPack. Install it with: sudo apt install ./OUT/reduce_*.deb
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-dist}"
scripts/setup.sh
build="${REDUCE_PACKAGE_BUILD_DIR:-build}"
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_BENCH=OFF \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/reduce_*.deb
