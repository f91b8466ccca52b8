#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Known answers for the adaptive pool: a server that serves one RPC at a
# time per connection and holds each reply 2 ms (rpclab serve
# --max-concurrent-streams 1 --delay 2ms), so one connection carries at
# most 500 RPC/s and the right size is the number of RPCs in flight.
# Runs pool:auto:1:8 beside the fixed sizes 1, 2, 4 and 8 (rpclab sweep),
# then the published policies (Spanner's, gRFC A105's, yarpc's) on the
# same pool (bench/peers' `policies run`), at 1, 2, 4 and 8 in flight,
# and prints one table (summarize.py).
#
#   experiments/pool-known-answers/run.sh            # OUT=/tmp/pool-known-answers
#   INTERVAL=5s ANCHOR_WARMUP=20s OUT=dir experiments/pool-known-answers/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/pool-known-answers}
INTERVAL=${INTERVAL:-3s}
WARMUP=${WARMUP:-1s}
ANCHOR_WARMUP=${ANCHOR_WARMUP:-10s}
INFLIGHT=${INFLIGHT:-1,2,4,8}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
mkdir -p "$OUT"
if [ -e "$OUT/records.jsonl" ]; then
  echo "run.sh: $OUT/records.jsonl exists; remove it or set OUT" >&2
  exit 2
fi

bin="$OUT/bin"
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/rpclab" ./cmd/rpclab)
(cd "$root/bench/peers" && go build -o "$bin/policies" ./cmd/policies)

# The capped server, as a command peers can start as its "rpclab serve".
cat >"$bin/rpclab-capped" <<WRAP
#!/bin/sh
exec "$bin/rpclab" "\$@" --max-concurrent-streams 1 --delay 2ms
WRAP
chmod +x "$bin/rpclab-capped"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" "$bin/rpclab-capped" serve --listen "127.0.0.1:$port" >"$OUT/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

taskset -c "$CLIENT_CPU" "$bin/rpclab" sweep --target "127.0.0.1:$port" \
  --conn pool:1,pool:2,pool:4,pool:8,pool:auto:1:8 --inflight "$INFLIGHT" \
  --warmup "$WARMUP" --interval "$INTERVAL" \
  -o "$OUT/records.jsonl" --pool-events "$OUT/pool-events.tsv" >"$OUT/sweep.txt" 2>"$OUT/sweep.log"

taskset -c "$CLIENT_CPU" "$bin/policies" run --rpclab "$bin/rpclab-capped" --server-cpus "$SERVER_CPU" \
  --policies spanner,a105,yarpc --inflight "$INFLIGHT" --repeats 1 \
  --warmup "$ANCHOR_WARMUP" --interval "$INTERVAL" >"$OUT/anchors.txt" 2>"$OUT/anchors.log"

python3 "$here/summarize.py" "$OUT/records.jsonl" "$OUT/anchors.txt" | tee "$OUT/table.txt"
