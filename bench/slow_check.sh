#!/usr/bin/env bash
# A slow boolean oracle for `check:` benchmarks (issue 48): sleeps SECONDS (as a TensorRT build
# would take), then decides with `reduce check` on ENGINE, with the candidate's own inputs: exit 1
# when the engine fails, 0 when it passes, as a Polygraphy `--check` script. The sleep only makes
# wall time show what `rounds` counts; rounds are a dependency chain, not a timing.
# usage (as an engine spec): check:bench/slow_check.sh SECONDS REDUCE_BIN ENGINE {model} {inputs}
set -euo pipefail
sleep "$1"
exec "$2" check "$4" --engine "$3" --inputs "$5" --threads 1 >/dev/null 2>&1
