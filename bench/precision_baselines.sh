#!/usr/bin/env bash
# `reduce precision` against Polygraphy-style baselines (`debug precision`: the first or last K
# float nodes kept in FP32, K found by bisection or one node at a time) on the corpus models that
# fail in reduced precision: the fault families run in fp16/bf16 and the precision families
# (`reduce-corpus --precision`, whose ground-truth set is known). Size of the set found and checks,
# -j 1; for the default also whether it is exactly the ground truth and whether -j 4 finds the same
# set. Prints a Markdown table for bench/RESULTS.md.
# usage: bench/precision_baselines.sh [BUILD_DIR (default build-bench)] [SIZES (10,100,1000)] [LINEAR_MAX (1000)]
#   LINEAR_MAX: polygraphy-linear (about n/2 checks) runs only on models of at most this many nodes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-bench}" && pwd)"
sizes="${2:-10,100,1000}"
linear_max="${3:-1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --faults all --precision all >/dev/null
field() { grep -m1 "\"$2\":" "$1" | sed -E 's/.*: ([^,]*),?/\1/'; }
variants=("default forward" "polygraphy-bisect forward" "polygraphy-bisect reverse" "polygraphy-linear forward" "polygraphy-linear reverse")
printf "| model | float nodes | ground truth | default = truth, -j 4 same |"
for v in "${variants[@]}"; do printf " %s: nodes / checks |" "$v"; done
printf "\n|---|---:|---:|---|"
for _ in "${variants[@]}"; do printf -- "---:|"; done
printf "\n"
# Rows: model, engine, nodes, ground truth (comma-separated names, or "-").
{
  tail -n +2 "$work/corpus/manifest.tsv" | awk -F'\t' '$2 ~ /fp16|bf16/ {print $1 "\t" $2 "\t" $5 "\t-"}'
  tail -n +2 "$work/corpus/precision_manifest.tsv" | awk -F'\t' '{print $1 "\t" $2 "\t" $5 "\t" $4}'
} > "$work/rows"
while IFS=$'\t' read -r model engine nodes truth; do
  row=""
  candidates="-"
  verdict="-"
  for v in "${variants[@]}"; do
    read -r strategy direction <<<"$v"
    if [ "$strategy" = polygraphy-linear ] && [ "$nodes" -gt "$linear_max" ]; then
      row="$row not run |"
      continue
    fi
    out="$work/out"
    rm -rf "$out"
    code=0
    "$build/reduce" precision "$work/corpus/$model" --engine "$engine" --strategy "$strategy" --direction "$direction" \
      -o "$out" >"$work/log" 2>&1 || code=$?
    if [ "$code" = 0 ]; then
      candidates=$(field "$out/report.json" candidates)
      row="$row $(wc -l < "$out/precision.txt") / $(field "$out/report.json" checks) |"
      if [ "$strategy" = default ]; then
        found=$(paste -sd, "$out/precision.txt")
        same=no
        rm -rf "$work/out4"
        if "$build/reduce" precision "$work/corpus/$model" --engine "$engine" -j 4 -o "$work/out4" >/dev/null 2>&1 &&
          cmp -s "$out/precision.txt" "$work/out4/precision.txt"; then same=yes; fi
        if [ "$truth" = "-" ]; then verdict="(no ground truth), $same"
        elif [ "$found" = "$truth" ]; then verdict="yes, $same"
        else verdict="NO ($found), $same"; fi
      fi
    else
      row="$row exit $code |"
    fi
  done
  size="-"
  [ "$truth" != "-" ] && size=$(echo "$truth" | tr ',' '\n' | wc -l)
  printf "| %s (%s) | %s | %s | %s |%s\n" "$model" "$engine" "$candidates" "$size" "$verdict" "$row"
done < "$work/rows"
