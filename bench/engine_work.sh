#!/usr/bin/env bash
# Engine work per reduction (issue 71): for every corpus family at each size, at each -j, the
# engine runs, rounds, and report.json `engine_work` (the nodes of every model the engine was
# given, summed, as a multiple of the model's nodes: the search's and all runs'), the reproducer's
# nodes, peak memory (max RSS) and wall time, and the search's time outside the engine per check
# (report.json `seconds` - `engine_seconds`, over `checks`; at -j 1 only) beside the mean candidate the engine was
# given (issue 71 item 3: it should grow with that, not with the model). The engine is the
# manifest's own (`opt:fault=...`, in
# process): the work is counted, not timed, so it says what a TensorRT build of each candidate
# would cost. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/engine_work.sh [BUILD_DIR (build)] [SIZES (1000,10000)] [JOBS ("1 8")] [FAULTS (all)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
sizes="${2:-1000,10000}"
jobs_list="${3:-1 8}"
faults="${4:-all}"
corpus_tool="${CORPUS_TOOL:-$build/reduce-corpus}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$corpus_tool" "$work/corpus" --sizes "$sizes" --faults "$faults" >/dev/null
echo "| model | -j | engine runs | rounds | search work (x nodes) | all work (x nodes) | reproducer nodes | max RSS MB | wall s | outside the engine per check ms | mean candidate nodes |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine _rest; do
  for j in $jobs_list; do
    out="$work/out-${model%.onnx}-$j"
    # Exit 8 (the failure is FP16 rounding: fp16-overflow) writes its bundle as 0 does.
    /usr/bin/time -f "%M %e" -o "$work/time" "$build/reduce" "$work/corpus/$model" --engine "$engine" -j "$j" -q -o "$out" </dev/null >/dev/null 2>"$work/err" || true
    if [ ! -f "$out/report.json" ]; then
      echo "| ${model%.onnx} | $j | failed: $(head -c 200 "$work/err" | tr '\n|' '  ') | | | | | | | | |"
      continue
    fi
    read -r rss wall < <(tail -n 1 "$work/time")  # after "Command exited with non-zero status N"
    python3 - "$out/report.json" "${model%.onnx}" "$j" "$rss" "$wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r["engine_work"]
search_runs = max(1, r["engine_runs_by_purpose"]["search"])
# At -j 1 only: with several slots engine_seconds sums runs that overlap.
outside = 1000 * (r["seconds"] - r["engine_seconds"]) / max(1, r["checks"])
outside_ms = f"{outside:.1f}" if sys.argv[3] == "1" else "-"
print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['engine_runs']} | {r['rounds']} | {w['search_x_model_nodes']:.1f} | "
      f"{w['x_model_nodes']:.1f} | {r['reduced']['nodes']} | {int(sys.argv[4]) // 1024} | {float(sys.argv[5]):.2f} | "
      f"{outside_ms} | {w['search_nodes'] / search_runs:.0f} |")
PY
  done
done
