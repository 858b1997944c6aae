#!/usr/bin/env bash
# `reduce precision` on the corpus models that fail in reduced precision (engine spec with fp16 or
# bf16; the fault families and the precision families, `reduce-corpus --precision`): the set found, its size, checks and seconds at each -j, and whether every -j gave the same
# set. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/precision_corpus.sh [BUILD_DIR (default build-bench)] [SIZES (10,100,1000)] [JOBS ("1 4")]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
sizes="${2:-10,100,1000}"
jobs="${3:-1 4}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --faults all --precision all >/dev/null
field() { grep -m1 "\"$2\":" "$1" | sed -E 's/.*: ([^,]*),?/\1/'; }
printf "| model | engine | outcome |"
for j in $jobs; do printf " -j %s: set / checks / s |" "$j"; done
printf " same set |\n|---|---|---|"
for j in $jobs; do printf -- "---|"; done
printf -- "---|\n"
while IFS=$'\t' read -r model engine _; do
  case "$engine" in *fp16*|*bf16*) ;; *) continue ;; esac
  printf "| %s | %s |" "$model" "$engine"
  first=""
  same="yes"
  outcome=""
  cells=""
  for j in $jobs; do
    out="$work/out-$j"
    rm -rf "$out"
    code=0
    "$build/reduce" precision "$work/corpus/$model" --engine "$engine" -j "$j" -o "$out" >"$work/log" 2>&1 || code=$?
    case $code in
      0) outcome="found"
         set=$(paste -sd+ "$out/precision.txt")
         [ -z "$first" ] && first="$set"
         [ "$set" = "$first" ] || same="no"
         cells="$cells $set / $(field "$out/report.json" checks) / $(printf %.2f "$(field "$out/report.json" seconds)") |" ;;
      3) outcome="does not fail"; cells="$cells - |" ;;
      4) outcome="fails even in FP32"; cells="$cells - |" ;;
      *) outcome="error $code"; cells="$cells - |" ;;
    esac
  done
  printf " %s |%s %s |\n" "$outcome" "$cells" "$same"
done < <(tail -n +2 "$work/corpus/manifest.tsv"; tail -n +2 "$work/corpus/precision_manifest.tsv")
