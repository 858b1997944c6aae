#!/usr/bin/env bash
# A slow external engine for `cmd:` benchmarks: sleeps SECONDS (as a TensorRT build would take),
# then runs the model with `reduce run` on ENGINE.
# usage (as an engine spec): cmd:bench/slow_engine.sh SECONDS REDUCE_BIN ENGINE {model} {inputs} {outputs}
set -euo pipefail
sleep "$1"
exec "$2" run "$4" --engine "$3" --inputs "$5" --save-outputs "$6" --save-format pb --threads 1 >/dev/null
