#!/usr/bin/env bash
# A release scan of ONNX's whole node-test suite (issue 67): the 1 695 cases of ../shared/onnx-node-tests
# and the 189 narrow-type cases of ../shared/onnx-node-tests-types (1 884 in all), on nine onnxruntime-node
# releases, with `reduce batch DIR --engine ort@A,ort@B,... -j JOBS`: the wall time of the scan and of the
# reductions of its changes, and the summary's table of classes, for bench/RESULTS.md.
# usage: bench/release_scan.sh [BUILD_DIR (default build-test)] [RELEASES] [JOBS (2)] [OUT (a temporary folder)]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The releases the tests installed (reduce's own default is the user's cache folder).
export REDUCE_CACHE_DIR="${REDUCE_CACHE_DIR:-$root/.cache}"
build="$(cd "${1:-$root/build-test}" && pwd)"
releases="${2:-ort@1.12.1,ort@1.14.0,ort@1.15.1,ort@1.16.3,ort@1.17.3,ort@1.18.0,ort@1.20.1,ort@1.22.0,ort@1.26.0}"
jobs="${3:-2}"
reduce="$build/reduce"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="${4:-$work/scan}"

# Every case, from the archives, in one folder (the suites' names do not collide).
cases="$work/cases"
mkdir -p "$cases"
for archive in "$root"/../shared/onnx-node-tests/node_*.tar.xz "$root"/../shared/onnx-node-tests-types/types_*.tar.xz; do
  tar -xJf "$archive" -C "$work"
done
find "$work" -mindepth 2 -maxdepth 3 -name model.onnx -not -path "$cases/*" | while read -r model; do
  dir="$(dirname "$model")"
  [[ -e "$cases/$(basename "$dir")" ]] || mv "$dir" "$cases/"
done
n=$(find "$cases" -mindepth 1 -maxdepth 1 -type d | wc -l)
# Each release installed before the clock starts (npm, once).
IFS=, read -ra list <<<"$releases"
for r in "${list[@]}"; do "$root/scripts/ort/install.sh" "${r#ort@}" >/dev/null || exit 1; done

start=$(date +%s.%N)
# stderr lines stamped as they come: the scan ends where the first reduction starts.
"$reduce" batch "$cases" --engine "$releases" -o "$out" -j "$jobs" 2>&1 >"$work/batch.out" |
  while IFS= read -r line; do echo "$(date +%s.%N) $line"; done >"$work/batch.err"
code=${PIPESTATUS[0]}
end=$(date +%s.%N)
first=$(grep -m1 ' batch: \[1/[0-9]*\] .* on ort@' "$work/batch.err" | cut -d' ' -f1)
scan_end="${first:-$end}"
echo "cases: $n; releases: $releases; -j $jobs; exit $code"
echo "scan: $(python3 -c "print(round($scan_end - $start))") s; reductions: $(grep -c ' batch: \[[0-9]*/[0-9]*\] .* on ort@' "$work/batch.err"), $(python3 -c "print(round($end - $scan_end))") s"
cat "$work/batch.out"
python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("\n| class | models |\n|---|---|")
for c, k in s["classes"].items():
    print(f"| {c} | {k} |")
changes = {}
for m in s["models"]:
    for c in m["changes"]:
        changes[c["kind"]] = changes.get(c["kind"], 0) + 1
print("\n| change | count |\n|---|---|")
for c, k in sorted(changes.items()):
    print(f"| {c} | {k} |")
print("\nrows with a change of behaviour:")
for m in s["models"]:
    if m["class"] in ("fixed", "regressed", "failure changed"):
        kinds = ", ".join(f'{c["kind"]} {c["from"]} -> {c["to"]} ({c.get("status", "")})' for c in m["changes"] if "command" in c)
        print(f'- {m["name"]}: {kinds}')
PY
