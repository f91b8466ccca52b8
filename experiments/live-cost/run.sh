#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# What sampling a running client costs it: the client's throughput and
# CPU per RPC with `rpclab doctor --pid` attached and without, interleaved,
# beside an A/A (without, twice) that states this host's noise.
#
# One arm is one `rpclab sweep` step (pool:4, in-flight 16, a plain
# `rpclab serve`); its process is the client. In the "on" arm a doctor
# --pid window samples it for the whole step, on the client's CPU (the
# sampler competes with the client: the worst place for it). Arms run in
# the order off, on, off2, rotated each round, so drift falls on all.
#
#   experiments/live-cost/run.sh                 # OUT=/tmp/live-cost ROUNDS=6
#   ROUNDS=10 INTERVAL=10s OUT=dir experiments/live-cost/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/live-cost}
ROUNDS=${ROUNDS:-6}
INTERVAL=${INTERVAL:-8s}
WARMUP=${WARMUP:-2s}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
if [ -e "$OUT/off.jsonl" ]; then
  echo "run.sh: $OUT holds a run; remove it or set OUT" >&2
  exit 2
fi
mkdir -p "$OUT/bin"
(cd "$root" && go build -o "$OUT/bin/rpclab" ./cmd/rpclab)
rpclab=$OUT/bin/rpclab

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" "$rpclab" serve --listen "127.0.0.1:$port" >"$OUT/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

# arm NAME: one sweep step, appended to $OUT/NAME.jsonl; "on" attaches
# doctor --pid to it for its warm-up and interval.
arm() {
  local name=$1 rec
  rec=$(mktemp "$OUT/step.XXXX.jsonl")
  rm -f "$rec"
  taskset -c "$CLIENT_CPU" "$rpclab" sweep --target "127.0.0.1:$port" --conn pool:4 --inflight 16 \
    --warmup "$WARMUP" --interval "$INTERVAL" -o "$rec" >>"$OUT/sweep.txt" 2>>"$OUT/sweep.log" &
  local client=$!
  if [ "$name" = on ]; then
    local live
    live=$(mktemp "$OUT/live.XXXX.jsonl")
    rm -f "$live"
    # The window covers the step; it ends early, judged, if the client exits first.
    taskset -c "$CLIENT_CPU" "$rpclab" doctor --pid "$client" --window 60s -o "$live" >>"$OUT/doctor.txt" 2>>"$OUT/doctor.log" || true
    cat "$live" >>"$OUT/live.jsonl"
    rm -f "$live"
  fi
  wait "$client"
  cat "$rec" >>"$OUT/$name.jsonl"
  rm -f "$rec"
}

arms=(off on off2)
for r in $(seq "$ROUNDS"); do
  for k in 0 1 2; do
    name=${arms[$(((k + r) % 3))]}
    echo "round $r/$ROUNDS: $name (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    arm "$name"
  done
done
python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
