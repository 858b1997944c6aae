#!/usr/bin/env bash
# The corpus with its network inside an If branch or a Loop body (reduce-corpus --in-if / --in-loop):
# for every fault family and size, does `reduce` reach the family's ground truth with no
# control-flow node left, 1-minimal? Prints a Markdown table for bench/RESULTS.md.
# usage: bench/control_flow_corpus.sh [BUILD_DIR (default build)] [SIZES (10,100,1000)] [JOBS (2)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
sizes="${2:-10,100,1000}"
jobs="${3:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "| model | ground truth | reduced to | 1-minimal | control flow | checks | s |"
echo "|---|---|---|---|---|---|---|"
for wrap in if loop; do
  "$build/reduce-corpus" "$work/$wrap" --sizes "$sizes" "--in-$wrap" >/dev/null
  tail -n +2 "$work/$wrap/manifest.tsv" | while IFS=$'\t' read -r model engine kind ops nodes desc; do
    out="$work/out-$wrap-${model%.onnx}"
    if ! "$build/reduce" "$work/$wrap/$model" --engine "$engine" -j "$jobs" -o "$out" >/dev/null 2>&1; then
      echo "| $model | $ops | failed | | | | |"
      continue
    fi
    python3 - "$out/report.json" "$model" "$ops" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ops = ",".join(f"{k}:{v}" for k, v in sorted(r["reduced"]["op_types"].items()))
cf = r["control_flow"]
flow = (f"{cf['inlined_if']} If inlined" if cf["inlined_if"] else
        f"{cf['unrolled_loops']} Loop unrolled ({cf['unrolled_iterations']} iterations)" if cf["unrolled_loops"] else "kept")
if cf["nodes_in_bodies"]: flow += f", {cf['nodes_in_bodies']} nodes left in bodies"
same = "" if ops == sys.argv[3] else " (differs)"
print(f"| {sys.argv[2]} | {sys.argv[3]} | {ops}{same} | {'yes' if r['one_minimal'] else 'no'} | {flow} | {r['checks']} | {r['seconds']:.2f} |")
PY
  done
done
echo
echo "(-j $jobs; op counts exclude Constant nodes)"
