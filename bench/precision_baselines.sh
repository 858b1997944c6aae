#!/usr/bin/env bash
# `reduce precision` against Polygraphy-style baselines (`debug precision`: the first or last K
# float nodes kept in FP32, K found by bisection or one node at a time) on the corpus models that
# fail in reduced precision: size of the set found and checks, -j 1. Prints a Markdown table for
# bench/RESULTS.md.
# usage: bench/precision_baselines.sh [BUILD_DIR (default build-bench)] [SIZES (10,100,1000)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
sizes="${2:-10,100,1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" >/dev/null
field() { grep -m1 "\"$2\":" "$1" | sed -E 's/.*: ([^,]*),?/\1/'; }
variants=("default forward" "polygraphy-bisect forward" "polygraphy-bisect reverse" "polygraphy-linear forward" "polygraphy-linear reverse")
printf "| model | float nodes |"
for v in "${variants[@]}"; do printf " %s: nodes / checks |" "$v"; done
printf "\n|---|---:|"
for _ in "${variants[@]}"; do printf -- "---:|"; done
printf "\n"
while IFS=$'\t' read -r model engine _; do
  case "$engine" in *fp16*|*bf16*) ;; *) continue ;; esac
  row=""
  candidates="-"
  for v in "${variants[@]}"; do
    read -r strategy direction <<<"$v"
    out="$work/out"
    rm -rf "$out"
    code=0
    "$build/reduce" precision "$work/corpus/$model" --engine "$engine" --strategy "$strategy" --direction "$direction" \
      -o "$out" >"$work/log" 2>&1 || code=$?
    if [ "$code" = 0 ]; then
      candidates=$(field "$out/report.json" candidates)
      row="$row $(wc -l < "$out/precision.txt") / $(field "$out/report.json" checks) |"
    else
      row="$row exit $code |"
    fi
  done
  printf "| %s (%s) | %s |%s\n" "$model" "$engine" "$candidates" "$row"
done < <(tail -n +2 "$work/corpus/manifest.tsv")
