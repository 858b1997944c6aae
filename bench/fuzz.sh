#!/usr/bin/env bash
# Fuzzing campaign (issue 16): builds the libFuzzer harnesses of fuzz/ with clang and runs each one
# after another, then prints one line per harness (executions, cov, ft, corpus, crash artifacts).
#
#   bench/fuzz.sh [--runs N] [--max-time S] [--build DIR] [--work DIR] [--no-build] [HARNESS...]
#
# --runs N       executions per harness (libFuzzer -runs; default 1000000)
# --max-time S   at most S seconds per harness, whichever comes first (-max_total_time; default 3600)
# --build DIR    the clang build (default build-fuzz)
# --work DIR     corpora, logs and crash artifacts (default .cache/fuzz); kept between runs, so a
#                second run starts from the corpus the first one grew
# --no-build     run the harnesses already built in DIR
# HARNESS        model_binary model_text npy npz tensor_pb reference_engine extract (default: all)
#
# Seeds: fuzz/seeds/NAME and fuzz/regressions/NAME, plus corpus/examples (models) and Debian's
# libonnx-testdata (model.onnx files for model_binary, input/output .pb files for tensor_pb).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=1000000
max_time=3600
build=build-fuzz
work=.cache/fuzz
harnesses=()
build_first=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --max-time) max_time="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --no-build) build_first=0; shift ;;
    -*) echo "usage: bench/fuzz.sh [--runs N] [--max-time S] [--build DIR] [--work DIR] [--no-build] [HARNESS...]" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(model_binary model_text npy npz tensor_pb reference_engine extract)

if [ $build_first = 1 ]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  # -O1 with assertions on (Debug): an assert that fires is a finding too.
  nice -n 10 cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DREDUCE_FUZZ=ON -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_BENCH=OFF \
    "${launcher[@]}" >/dev/null
  targets=()
  for h in "${harnesses[@]}"; do targets+=("${h}_fuzzer"); done
  nice -n 10 cmake --build "$build" -j 2 --target "${targets[@]}"
fi

testdata=/usr/share/libonnx-testdata/data
# Extra seeds that are not committed: links into a folder per harness (small files only).
extra_seeds() {
  local name="$1" dir="$2"
  rm -rf "$dir" && mkdir -p "$dir"
  case "$name" in
    model_binary)
      for f in corpus/examples/*.onnx; do ln -s "$PWD/$f" "$dir/$(basename "$f")"; done
      [ -d "$testdata" ] && find "$testdata" -name model.onnx -size -64k | while read -r f; do
        ln -s "$f" "$dir/$(echo "${f#$testdata/}" | tr / _)"; done ;;
    model_text)
      for f in corpus/examples/*.onnxtxt; do ln -s "$PWD/$f" "$dir/$(basename "$f")"; done ;;
    tensor_pb)
      [ -d "$testdata" ] && find "$testdata" -name '*.pb' -size -16k | while read -r f; do
        ln -s "$f" "$dir/$(echo "${f#$testdata/}" | tr / _)"; done ;;
  esac
  return 0
}

summary="$work/summary.tsv"
mkdir -p "$work"
printf 'harness\texecs\tseconds\tcov\tft\tcorpus\tcrashes\n' > "$summary"
for h in "${harnesses[@]}"; do
  dir="$work/$h"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  extra_seeds "$h" "$dir/extra"
  seeds=("fuzz/seeds/$h")
  [ -d "fuzz/regressions/$h" ] && seeds+=("fuzz/regressions/$h")
  start=$(date +%s)
  echo "== $h: -runs=$runs -max_total_time=$max_time" >&2
  set +e
  nice -n 10 "$build/fuzz/${h}_fuzzer" -runs="$runs" -max_total_time="$max_time" -rss_limit_mb=2048 \
    -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    "$dir/corpus" "$dir/extra" "${seeds[@]}" > "$dir/log" 2>&1
  status=$?
  set -e
  seconds=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1)
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corpus=$(find "$dir/corpus" -type f | wc -l)
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$h" "${execs:-?}" "$seconds" "${cov:-?}" "${ft:-?}" "$corpus" "$crashes" >> "$summary"
  [ $status -eq 0 ] || echo "$h: libFuzzer exited with $status (see $dir/log, $dir/artifacts)" >&2
done
column -t -s $'\t' "$summary"
