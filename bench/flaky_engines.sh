#!/usr/bin/env bash
# Sourced by the flaky-engine benches (flaky_any_model.sh, trust_rates.sh): a 6-node model and a
# check: script that fails at random, seeded per trial.
# write_chain_model FILE: Relu, Sigmoid, Mul, Tanh, Abs, Neg in a chain (the tests' kBroadcastChain).
write_chain_model() {
  cat > "$1" <<'MODEL'
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,3,3] X, float[1,1,3,3] M) => (float[1,4,3,3] Y)
{
  a = Relu(X)
  b = Sigmoid(M)
  c = Mul(a, b)
  d = Tanh(c)
  e = Abs(d)
  Y = Neg(e)
}
MODEL
}
# write_flaky_script FILE: `sh FILE MODEL` fails on P% of its runs (run K of trial T draws from awk's
# srand(T * 100000 + K)), and always on a model with a Tanh when FLAKY_DIR/tanh exists. FLAKY_DIR
# holds the run counter (count), the trial (seed) and P (p).
write_flaky_script() {
  cat > "$1" <<'SCRIPT'
#!/bin/sh
n=$(( $(cat "$FLAKY_DIR/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$FLAKY_DIR/count"
if [ -e "$FLAKY_DIR/tanh" ] && grep -aq Tanh "$1"; then echo 'engine: internal error'; exit 1; fi
r=$(awk -v s="$(cat "$FLAKY_DIR/seed")" -v n="$n" -v p="$(cat "$FLAKY_DIR/p")" 'BEGIN { srand(s * 100000 + n); print (rand() < p / 100) ? 1 : 0 }')
if [ "$r" = 1 ]; then echo 'engine: internal error'; exit 1; fi
exit 0
SCRIPT
}
