#!/usr/bin/env bash
# Installs ONNX Runtime for Node (onnxruntime-node@1.30.0, from npm) into a cache folder, for
# cross-checks and benchmarks only: no C++ code links it. Prints the folder on the last line.
# --ignore-scripts: the package's install script downloads CUDA parts and fails offline.
set -euo pipefail
dir="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.cache/ort}"
version=1.30.0
mkdir -p "$dir"
marker="$dir/node_modules/onnxruntime-node/package.json"
if [[ ! -f "$marker" ]] || ! grep -q "\"version\": \"$version\"" "$marker"; then
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "onnxruntime-node@$version" >&2)
fi
node -e "require(process.argv[1] + '/node_modules/onnxruntime-node')" "$dir" >&2 \
  || { echo "error: $dir: onnxruntime-node does not load" >&2; exit 1; }
echo "$dir"
