#!/usr/bin/env bash
# How long `reduce` takes to exit after Ctrl-C (SIGINT) at several moments of a 10 000-node
# reduction, and whether anything it started is left running. Prints a Markdown table for
# bench/RESULTS.md. The test InterruptAt.* checks the same moments for exit code and bundle.
# usage: bench/interrupt.sh [BUILD_DIR (build-bench)] [REPEATS (3)] [ENGINE_FAMILY (attention-unstable-softmax)]
set -euo pipefail
# Job control: without it bash starts background commands with SIGINT ignored.
set -m
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
repeats="${2:-3}"
family="${3:-attention-unstable-softmax}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes 10000 --faults "$family" >/dev/null
read -r model engine kind ops _ < <(tail -n +2 "$work/corpus/manifest.tsv")
echo "model: $model (10 000 nodes), engine: $engine, reduce --strategy ddmin -j 1"
echo
echo "| moment | runs | exit codes | ms to exit (median, max) | left running | bundle |"
echo "|---|---:|---|---:|---:|---|"

lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }

# moment: "delay:SECONDS" or "journal:LINES"
for moment in delay:0.3 delay:2 journal:2 journal:3; do
  codes=() ms=() left=0 bundles=()
  for ((r = 0; r < repeats; r++)); do
    out="$work/out-$r"
    rm -rf "$out"
    "$build/reduce" "$work/corpus/$model" --engine "$engine" -j 1 --strategy ddmin -o "$out" >/dev/null 2>"$work/err" &
    pid=$!
    case "$moment" in
      delay:*) sleep "${moment#delay:}" ;;
      journal:*) until [ "$(lines "$out/journal")" -ge "${moment#journal:}" ] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done ;;
    esac
    start=$(date +%s%N)
    kill -INT "$pid" 2>/dev/null || true
    code=0
    wait "$pid" || code=$?
    end=$(date +%s%N)
    codes+=("$code")
    ms+=($(((end - start) / 1000000)))
    left=$((left + $(pgrep -fc "$work" || true)))
    if [ -f "$out/report.json" ]; then bundles+=("written"); elif grep -q "nothing written" "$work/err"; then bundles+=("nothing"); else bundles+=("MISSING"); fi
  done
  sorted=($(printf '%s\n' "${ms[@]}" | sort -n))
  median=${sorted[$((${#sorted[@]} / 2))]}
  max=${sorted[-1]}
  printf "| %s | %d | %s | %d, %d | %d | %s |\n" "$moment" "$repeats" "$(printf '%s\n' "${codes[@]}" | sort | uniq -c | awk '{printf "%s%sx%s", sep, $1, $2; sep=" "}')" \
    "$median" "$max" "$left" "$(printf '%s\n' "${bundles[@]}" | sort | uniq -c | awk '{printf "%s%sx %s", sep, $1, $2; sep=", "}')"
done
