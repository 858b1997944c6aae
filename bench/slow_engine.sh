#!/usr/bin/env bash
# A slow engine for benchmarks (issue 48): sleeps SECONDS (as a TensorRT build would take), then
# runs the model on ENGINE through `reduce`, in one of two shapes:
#   cmd:   runs it with `reduce run` and saves its outputs for reduce to compare;
#   check: (--check first) decides with `reduce check` on the candidate's own inputs: exit 1 when
#          the engine fails, 0 when it passes, as a Polygraphy `--check` script.
# The sleep only makes wall time show what report.json `rounds` counts (a dependency chain of
# engine runs, docs/reducer.md "Rounds"), never a timing the counts depend on.
# usage (as an engine spec):
#   cmd:bench/slow_engine.sh SECONDS REDUCE_BIN ENGINE {model} {inputs} {outputs}
#   check:bench/slow_engine.sh --check SECONDS REDUCE_BIN ENGINE {model} {inputs} [CHECK OPTIONS...]
# CHECK OPTIONS go to `reduce check` (a tolerance: --atol 0).
set -euo pipefail
if [ "${1:-}" = --check ]; then
  [ $# -ge 6 ] || { echo "usage: slow_engine.sh --check SECONDS REDUCE_BIN ENGINE MODEL INPUTS [CHECK OPTIONS...]" >&2; exit 2; }
  sleep "$2"
  reduce_bin="$3" engine="$4" model="$5" inputs="$6"
  shift 6
  exec "$reduce_bin" check "$model" --engine "$engine" --inputs "$inputs" --threads 1 "$@" >/dev/null 2>&1
fi
[ $# -eq 6 ] || { echo "usage: slow_engine.sh SECONDS REDUCE_BIN ENGINE MODEL INPUTS OUTPUTS" >&2; exit 2; }
sleep "$1"
exec "$2" run "$4" --engine "$3" --inputs "$5" --save-outputs "$6" --save-format pb --threads 1 >/dev/null
