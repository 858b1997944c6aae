#!/usr/bin/env bash
# Installs ONNX.js (onnxjs@0.1.8, from npm) into a cache folder, for tests and benchmarks that run it
# as a `cmd:` engine (docs/examples/onnxjs_adapter.mjs): nothing links it. npm runs only when the
# cache is missing or wrong; the packages the adapter loads are checked against pinned SHA-512
# integrities (what npm verified the tarballs with), so the cache is offline afterwards.
# Prints the folder on the last line.
set -euo pipefail
dir="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.cache/onnxjs}"
# package | version | SHA-512 integrity of its npm tarball
readonly pinned="
onnxjs     0.1.8 sha512-7yxFq6cOVUm23OW9gUvDcfkG9OR5Fkleaa4Ce+rhExQmI8OTx6hdb2/9I1jRbyVLJRxlL0MDQgQCb4YxdLcZGw==
onnx-proto 4.0.4 sha512-aldMOB3HRoo6q/phyB6QRQxSt895HNNw82BNyZ2CMh4bjeKv7g/c+VpAFtJuEMVfYLMbRx61hbuqnKceLeDcDA==
"
lock="$dir/node_modules/.package-lock.json"

# Whether every pinned package is installed with its version and integrity.
installed() {
  [[ -f "$lock" ]] || return 1
  node -e '
    const lock = require(process.argv[1]).packages;
    for (const line of process.argv[2].trim().split("\n")) {
      const [name, version, integrity] = line.trim().split(/\s+/);
      const p = lock["node_modules/" + name];
      if (!p || p.version !== version || p.integrity !== integrity) process.exit(1);
    }' "$lock" "$pinned"
}

mkdir -p "$dir"
if ! installed; then
  command -v npm >/dev/null || { echo "error: npm is needed to install onnxjs (not found in PATH)" >&2; exit 1; }
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error onnxjs@0.1.8 >&2)
  installed || { echo "error: $dir: onnxjs or onnx-proto does not match its pinned version and SHA-512" >&2; exit 1; }
fi
node -e "require(process.argv[1] + '/node_modules/onnxjs'); require(process.argv[1] + '/node_modules/onnx-proto')" "$dir" >&2 \
  || { echo "error: $dir: onnxjs does not load" >&2; exit 1; }
echo "$dir"
