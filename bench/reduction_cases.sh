# The models bench/engine_runs.sh and bench/rounds.sh reduce (sourced): the corpus families at the
# given sizes, then every fixture of a folder that the fault table gives an engine for.
# reduction_cases BUILD WORK SIZES FAULTS FIXTURE_DIR FAULT_TABLE prints one tab-separated line per
# model: label, model path, engine spec, node count, the input option (`--inputs` of the fixture's
# own sample, or empty), further options of the comparison (the table's, or empty). FAULTS "none" leaves the corpus out, FIXTURE_DIR "none" the fixtures. Fixtures of the folder
# with no line in the table are said on stderr, not reduced: no fault of the table applies to them.
# The table (bench/fixture_faults.tsv): `fixture<TAB>engine<TAB>options ("-": none)<TAB>why`, `#`
# lines are comments; a fixture is a folder holding model.onnx and test_data_set_0/.
# CORPUS_SEED (env): the generator's seed (reduce-corpus --seed; default its own), for models the
# search was not tuned on: the same families with other weights and inputs (a family's graph at a
# given size does not change with the seed).
reduction_cases() {
  local build="$1" work="$2" sizes="$3" faults="$4" fixtures="$5" table="$6"
  if [ "$faults" != none ]; then
    "$build/reduce-corpus" "$work/corpus" --sizes "$sizes" --faults "$faults" ${CORPUS_SEED:+--seed "$CORPUS_SEED"} >/dev/null
    tail -n +2 "$work/corpus/manifest.tsv" | while IFS=$'\t' read -r model engine _kind _ops nodes _desc; do
      printf '%s\t%s\t%s\t%s\t\t\n' "${model%.onnx}" "$work/corpus/$model" "$engine" "$nodes"
    done
  fi
  [ "$fixtures" = none ] && return 0
  local dir name engine options nodes
  for dir in "$fixtures"/*/; do
    dir="${dir%/}"
    name="$(basename "$dir")"
    [ -f "$dir/model.onnx" ] || continue
    engine="$(awk -F'\t' -v n="$name" '$1 == n && $0 !~ /^#/ { print $2; exit }' "$table")"
    options="$(awk -F'\t' -v n="$name" '$1 == n && $0 !~ /^#/ { print $3; exit }' "$table")"
    [ "$options" = - ] && options=""
    if [ -z "$engine" ]; then
      echo "reduction_cases: $name: no fault in $table, not reduced" >&2
      continue
    fi
    nodes="$("$build/reduce" info "$dir/model.onnx" | awk '/^nodes:/ { print $2; exit }')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$dir/model.onnx" "$engine" "${nodes:-?}" "--inputs $dir/test_data_set_0" "$options"
  done
}
