#!/usr/bin/env bash
# Per-check cost of the `ort` engine (persistent Node.js workers) against a `cmd:` engine that starts
# node and loads onnxruntime-node for every check (scripts/ort/run_ort.js), on corpus models of 100
# and 1000 nodes. Each is a reduction with `--atol 0 --rtol 0` (ONNX Runtime's float rounding against
# the exact reference) and the polygraphy-linear strategy at -j 1: one engine run per check, none
# cached, as many checks as nodes. A run that is not done after LIMIT seconds is stopped with SIGINT
# (as Ctrl-C) and measured on the checks it made. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/ort_worker.sh [BUILD_DIR (Release; default build)] [SIZES (100,1000)] [LIMIT (180)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
sizes="${2:-100,1000}"
limit="${3:-180}"
ort="$("$root/scripts/ort/install.sh" | tail -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --faults broadcast-batch1 >/dev/null

engines=(
  "ort:threads=1"
  "cmd:node $root/scripts/ort/run_ort.js $ort {model} {inputs} {outputs} --threads 1"
)

echo "| model | engine | checks (= engine runs) | search time (s) | ms per check | result |"
echo "|---|---|---:|---:|---:|---|"
IFS=',' read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
  model="$work/corpus/broadcast_batch1_cnn_$size.onnx"
  for engine in "${engines[@]}"; do
    log="$work/$size-${engine%%:*}.log"
    status=0
    REDUCE_ORT_DIR="$ort" timeout -k 120 -s INT "$limit" "$build/reduce" "$model" --engine "$engine" --atol 0 --rtol 0 \
      --strategy polygraphy-linear -j 1 -o "$work/out-$size-${engine%%:*}" >"$log" 2>&1 || status=$?
    # The search's own count and time: the summary line "N checks, M cache hits, S s" of a finished
    # run, else the last "progress: ..., N checks (M cached), ..., S s, ..." line before the stop.
    line="$(sed -nE 's/^([0-9]+) checks, ([0-9]+) cache hits, ([0-9.e+-]+) s$/\1 \2 \3/p' "$log")"
    result="$(sed -nE 's/^reduced [0-9]+ -> (.*)$/\1/p' "$log" | head -1)"
    if [[ -z "$line" ]]; then
      line="$(sed -nE 's/^progress: .*, ([0-9]+) checks \(([0-9]+) cached\), .*, ([0-9.]+) s, .*$/\1 \2 \3/p' "$log" | tail -1)"
      result="stopped after ${limit} s (exit $status)"
    fi
    read -r checks cached seconds <<<"$line"
    label="${engine%% *}"
    [[ "$engine" == cmd:* ]] && label="cmd:node run_ort.js (a process per check)"
    awk -v m="$size nodes" -v e="$label" -v c="$checks" -v k="$cached" -v s="$seconds" -v r="$result" \
      'BEGIN { printf "| %s | `%s` | %d%s | %.1f | %.0f | %s |\n", m, e, c, (k > 0 ? " (" k " cached)" : ""), s, 1000 * s / (c - k), r }'
  done
done
