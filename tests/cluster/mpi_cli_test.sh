#!/usr/bin/env bash
# `reduce` under a real `mpirun` on the loopback interface (3 ranks, oversubscribed): the same
# reproducer bytes as one host's -j run, with and without a worker rank killed mid-reduction.
# A batch over the bundled corpus examples gives the same buckets with 3 ranks as on one host, also
# when a worker rank is killed or frozen while it reduces one of them (the model is tried again
# elsewhere).
# Workers whose rank 0 stops answering kill their engine runs and exit.
# usage: mpi_cli_test.sh same-bytes|worker-killed|batch|batch-rank-lost|batch-rank-frozen|rank0-silent
#        REDUCE_BIN SOURCE_DIR
set -euo pipefail
case_name="$1"
reduce="$2"
source_dir="$3"
work="$(mktemp -d)"
orphans=()  # process groups (or processes) a failed or killed rank may leave behind
launcher=""  # a background mpirun: ended with its ranks when the test fails before it ends
cleanup() {
  for pid in "${orphans[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
  if [ -n "$launcher" ] && kill -TERM "$launcher" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$launcher" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no other network.
mpirun=(mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -n 3)
fail() { echo "FAIL: $*" >&2; exit 1; }
# --enable-recovery (a rank that dies does not abort the job) also hides ranks' exit codes: the
# sanitizers' reports are looked for in the output instead.
check_sanitizers() {
  if grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$work/err.txt" "$work/out.txt"; then fail "sanitizer report"; fi
}

# The pid of the child of `launcher` whose environment says it is MPI rank `rank` (empty: none yet).
rank_pid() {
  local launcher="$1" rank="$2" pid
  for pid in $(pgrep -P "$launcher" || true); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then
      echo "$pid"
      return
    fi
  done
}

model="$source_dir/corpus/examples/broadcast_batch1_cnn_50.onnx"
engine="opt:fault=broadcast-batch1"

case "$case_name" in
  same-bytes)
    "$reduce" "$model" --engine "$engine" -j 3 -o "$work/one-host" >/dev/null 2>&1 || fail "reduce -j 3"
    "${mpirun[@]}" "$reduce" "$model" --engine "$engine" -j 1 -o "$work/mpi" >"$work/out.txt" 2>"$work/err.txt" ||
      { cat "$work/out.txt" "$work/err.txt"; fail "mpirun reduce"; }
    cmp "$work/one-host/model.onnx" "$work/mpi/model.onnx" || fail "model.onnx differs from the -j 3 run"
    grep -q '"ranks": 3,' "$work/mpi/report.json" || fail "report.json: ranks is not 3"
    grep -q '"slots": 3,' "$work/mpi/report.json" || fail "report.json: slots is not 3"
    grep -q '"ranks_lost": 0,' "$work/mpi/report.json" || fail "report.json: ranks_lost is not 0"
    grep -Eq '"remote_checks": [1-9]' "$work/mpi/report.json" || fail "report.json: no check ran on another rank"
    # Progress and logs from rank 0 only: one start line, one result.
    [ "$(grep -c '^reduce: .* nodes) on' "$work/err.txt")" = 1 ] || { cat "$work/err.txt"; fail "start line not printed once"; }
    [ "$(grep -c '^reduced ' "$work/out.txt")" = 1 ] || { cat "$work/out.txt"; fail "result not printed once"; }
    ;;
  worker-killed)
    # A slow check: script (1 s a check, as an engine build takes) so that the reduction is under
    # way when rank 1 is frozen and killed: interesting while the model holds a Sigmoid node.
    printf '#!/bin/sh\nsleep 1\nif grep -q Sigmoid "$1"; then exit 1; fi\n' >"$work/check.sh"
    spec="check:sh $work/check.sh {model}"
    "$reduce" "$model" --engine "$spec" -j 3 -o "$work/one-host" >/dev/null 2>&1 || fail "reduce -j 3"
    "${mpirun[@]}" --enable-recovery "$reduce" "$model" --engine "$spec" -j 1 --rank-timeout 2 -o "$work/mpi" \
      >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    # Rank 1 is the child of mpirun whose environment says so.
    for _ in $(seq 600); do
      rank1=$(rank_pid "$launcher" 1)
      [ -n "$rank1" ] && [ -s "$work/mpi/journal" ] && break
      sleep 0.05
    done
    [ -n "$rank1" ] && [ -s "$work/mpi/journal" ] || fail "the reduction did not start"
    # Frozen first (a host that stops answering: checks sent to it meanwhile are lost), then killed.
    kill -STOP "$rank1"
    sleep 3
    kill -KILL "$rank1"
    wait "$launcher" || { cat "$work/out.txt" "$work/err.txt"; fail "mpirun reduce"; }
    grep '^cluster: rank 1 dropped' "$work/err.txt" || { cat "$work/err.txt"; fail "no log line for the dropped rank"; }
    grep -q '"interrupted": false' "$work/mpi/report.json" || fail "the reduction was interrupted"
    cmp "$work/one-host/model.onnx" "$work/mpi/model.onnx" || fail "model.onnx differs from the -j 3 run"
    grep -q '"ranks_lost": 1,' "$work/mpi/report.json" || fail "report.json: ranks_lost is not 1"
    grep -Eq '"remote_checks": [1-9]' "$work/mpi/report.json" || fail "report.json: no check ran on rank 2"
    ;;
  batch)
    "$reduce" batch "$source_dir/corpus/examples" -o "$work/one-host" -j 1 >/dev/null 2>&1 || fail "reduce batch"
    "${mpirun[@]}" "$reduce" batch "$source_dir/corpus/examples" -o "$work/mpi" -j 1 >"$work/out.txt" 2>"$work/err.txt" ||
      { cat "$work/out.txt" "$work/err.txt"; fail "mpirun reduce batch"; }
    [ "$(grep -c 'summary:' "$work/out.txt")" = 1 ] || { cat "$work/out.txt"; fail "summary line not printed once"; }
    # The bucket count, every row's status, and the buckets with their models.
    buckets() { grep -E '^  "buckets"|"status"' "$1"; sed -n '/"buckets_detail"/,$p' "$1"; }
    [ "$(buckets "$work/one-host/summary.json")" = "$(buckets "$work/mpi/summary.json")" ] || fail "buckets differ"
    for m in broadcast_batch1_cnn_50 attention_softmax_transformer_50 conv_bn_eps_cnn_50; do
      cmp "$work/one-host/$m/model.onnx" "$work/mpi/$m/model.onnx" || fail "$m/model.onnx differs"
    done
    ;;
  batch-rank-lost | batch-rank-frozen)
    # The bundled examples, each with a slow check: script (0.3 s a check) that calls a model
    # interesting while it holds the example's first ground-truth op: every reduction takes seconds,
    # so rank 1 is stopped mid-reduction, then killed (batch-rank-lost) or woken up once it was
    # dropped (batch-rank-frozen: its reduction went on meanwhile, and it may still answer). Its
    # model must be reduced again on another rank, with the same reproducer as on one host; its
    # lost try must not touch the bundle, nor count.
    printf '#!/bin/sh\nsleep 0.3\nif grep -q "$1" "$2"; then exit 1; fi\n' >"$work/check.sh"
    {
      printf 'model\tengine\n'
      tail -n +2 "$source_dir/corpus/examples/manifest.tsv" | while IFS=$'\t' read -r m _ _ ops _; do
        printf '%s\tcheck:sh %s %s {model}\n' "$source_dir/corpus/examples/$m" "$work/check.sh" "${ops%%:*}"
      done
    } >"$work/batch.tsv"
    "$reduce" batch "$work/batch.tsv" -o "$work/one-host" -j 1 >/dev/null 2>&1 || fail "reduce batch"
    "${mpirun[@]}" --enable-recovery "$reduce" batch "$work/batch.tsv" -o "$work/mpi" -j 1 --rank-timeout 2 \
      >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    # Rank 1 once its reduction (a child process, in a process group of its own) has run a second.
    reduction=""
    for _ in $(seq 600); do
      rank1=$(rank_pid "$launcher" 1)
      [ -n "$rank1" ] && reduction=$(pgrep -P "$rank1" | head -1 || true)
      [ -n "$reduction" ] && [ "$(ps -o etimes= -p "$reduction" | tr -d ' ')" -ge 1 ] 2>/dev/null && break
      sleep 0.05
    done
    [ -n "$reduction" ] || fail "rank 1 did not start a reduction"
    orphans+=("$reduction")
    kill -STOP "$rank1"
    sleep 3
    if [ "$case_name" = batch-rank-lost ]; then kill -KILL "$rank1"; else kill -CONT "$rank1"; fi
    wait "$launcher" || { cat "$work/out.txt" "$work/err.txt"; fail "mpirun reduce batch"; }
    if [ "$case_name" = batch-rank-frozen ]; then
      # Woken up, the dropped rank still hears rank 0's heartbeats: it answers late (ignored) and
      # waits for the end of the job instead of leaving it.
      if grep '^error: rank 1: nothing from rank 0' "$work/err.txt"; then fail "the woken rank 1 left the job"; fi
    fi
    grep '^cluster: rank 1 dropped .*its model goes to another rank' "$work/err.txt" ||
      { cat "$work/err.txt"; fail "no log line for the dropped rank and its model"; }
    [ "$(grep -c 'summary:' "$work/out.txt")" = 1 ] || { cat "$work/out.txt"; fail "summary line not printed once"; }
    buckets() { grep -E '^  "buckets"|"status"' "$1"; sed -n '/"buckets_detail"/,$p' "$1"; }
    [ "$(buckets "$work/one-host/summary.json")" = "$(buckets "$work/mpi/summary.json")" ] ||
      { cat "$work/mpi/summary.md"; fail "buckets differ"; }
    for m in broadcast_batch1_cnn_50 attention_softmax_transformer_50 conv_bn_eps_cnn_50; do
      cmp "$work/one-host/$m/model.onnx" "$work/mpi/$m/model.onnx" || fail "$m/model.onnx differs"
    done
    grep -q '"ranks_lost": 1,' "$work/mpi/summary.json" || fail "summary.json: ranks_lost is not 1"
    [ "$(tr -d ' \n' <"$work/mpi/summary.json" | grep -o '"lost_ranks":\[1\]' | wc -l)" = 1 ] ||
      fail "summary.json: no row with lost_ranks [1]"
    grep -q 'Rank 1 was lost while reducing .* (tried again on another rank)' "$work/mpi/summary.md" ||
      fail "summary.md does not say which model rank 1 was reducing"
    # The lost try wrote into a folder of its own, never into a bundle, and was not moved in place
    # (its late result, batch-rank-frozen, did not count).
    ls -d "$work"/mpi/.*.attempt-1 >/dev/null || fail "no folder of the lost try"
    ;;
  rank0-silent)
    # A 1-second check: script; once $work/hang exists, a worker rank's checks hang for a minute
    # (each logs its pid), so that the workers have engine runs to kill when rank 0 stops.
    {
      printf '#!/bin/sh\n'
      printf 'if [ -e "%s/hang" ] && [ "$OMPI_COMM_WORLD_RANK" != 0 ]; then echo $$ >>"%s/hanging"; sleep 60; fi\n' "$work" "$work"
      printf 'sleep 1\nif grep -q Sigmoid "$1"; then exit 1; fi\n'
    } >"$work/check.sh"
    spec="check:sh $work/check.sh {model}"
    "$reduce" "$model" --engine "$spec" -j 3 -o "$work/one-host" >/dev/null 2>&1 || fail "reduce -j 3"
    # Each rank's exit code is written down by a shell around it (mpirun --enable-recovery hides them).
    "${mpirun[@]}" --enable-recovery sh -c '"$@"; echo "$OMPI_COMM_WORLD_RANK $?" >>"$0"' "$work/exits" \
      "$reduce" "$model" --engine "$spec" -j 1 --rank-timeout 2 -o "$work/mpi" >"$work/out.txt" 2>"$work/err.txt" &
    launcher=$!
    rank0=""
    for _ in $(seq 600); do
      shell=$(rank_pid "$launcher" 0)
      [ -n "$shell" ] && rank0=$(pgrep -P "$shell" | head -1 || true)
      [ -n "$rank0" ] && [ -s "$work/mpi/journal" ] && break
      sleep 0.05
    done
    [ -n "$rank0" ] && [ -s "$work/mpi/journal" ] || fail "the reduction did not start"
    orphans+=("$rank0")  # killed at exit if the test fails while it is stopped
    touch "$work/hang"
    for _ in $(seq 600); do [ -s "$work/hanging" ] && break; sleep 0.05; done
    [ -s "$work/hanging" ] || fail "no worker check started after $work/hang"
    kill -STOP "$rank0"
    for _ in $(seq 400); do [ "$(cat "$work/exits" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.05; done
    [ "$(sort "$work/exits" 2>/dev/null)" = "$(printf '1 5\n2 5')" ] ||
      { cat "$work/exits" "$work/err.txt" 2>/dev/null || true; fail "the workers did not exit with code 5"; }
    for rank in 1 2; do
      [ "$(grep -c "^error: rank $rank: nothing from rank 0 for 2000 ms" "$work/err.txt")" = 1 ] ||
        { cat "$work/err.txt"; fail "no one line from rank $rank"; }
    done
    while read -r pid; do
      if kill -0 "$pid" 2>/dev/null; then fail "a worker's check (pid $pid) outlived it"; fi
    done <"$work/hanging"
    # Rank 0 goes on alone: it drops the silent workers and checks their candidates itself.
    rm "$work/hang"
    kill -CONT "$rank0"
    wait "$launcher" || { cat "$work/out.txt" "$work/err.txt"; fail "mpirun reduce"; }
    grep -q '^0 0$' "$work/exits" || { cat "$work/exits" "$work/err.txt" || true; fail "rank 0 did not end normally"; }
    cmp "$work/one-host/model.onnx" "$work/mpi/model.onnx" || fail "model.onnx differs from the -j 3 run"
    grep -q '"ranks_lost": 2,' "$work/mpi/report.json" || fail "report.json: ranks_lost is not 2"
    ;;
  *) fail "unknown case $case_name" ;;
esac
check_sanitizers
echo "ok: $case_name"
