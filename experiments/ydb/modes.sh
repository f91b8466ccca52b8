#!/usr/bin/env bash
# YDB's experiment in its own words: rpclab-ydb-ping (YDB's command line) against the
# C++ server, default channels (C-core's trap: one TCP connection) against
# --local-pool, for the sync, async and callback APIs, at in-flight 4 and
# 32, RUNS times interleaved; then each mode's local-pool/default ratio run
# by run with its range (experiments/ratios), and the published-vs-local overlay.
#   RUNS=3 OUT=ydb-modes experiments/ydb/modes.sh
# Client and server are pinned to different CPUs (taskset), as rpclab pins.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
out=${OUT:-${TMPDIR:-/tmp}/rpclab-ydb-modes}
warmup=${WARMUP:-2}
interval=${INTERVAL:-5}
mkdir -p "$out"
bash clients/cpp/build.sh
go build -o bin/rpclab ./cmd/rpclab
last=$(( $(nproc) - 1 ))
port=${PORT:-2137}
taskset -c "$last" bin/rpclab serve --impl cpp --listen "127.0.0.1:$port" > "$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  grep -q listening "$out/server.log" 2>/dev/null && break
  sleep 0.1
done
for i in $(seq 1 "$runs"); do
  for mode in sync async async-callback; do
    flag=()
    [ "$mode" != sync ] && flag=(--"$mode")
    for n in 4 32; do
      for pool in default local-pool; do
        lp=()
        [ "$pool" = local-pool ] && lp=(--local-pool)
        echo "ydb-modes: run $i $mode in-flight $n $pool" >&2
        taskset -c 0 clients/cpp/rpclab-ydb-ping --host "127.0.0.1:$port" --inflight "$n" \
          --warmup "$warmup" --interval "$interval" "${flag[@]}" "${lp[@]}" \
          --out "$out/$mode-$i.part" > /dev/null
        cat "$out/$mode-$i.part" >> "$out/$mode-$i.jsonl"
        rm -f "$out/$mode-$i.part"
      done
    done
  done
done
for mode in sync async async-callback; do
  echo "== $mode"
  go run ./experiments/ratios --base channel-per-worker "$out/$mode"-[0-9]*.jsonl
done
