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
# and prints one table (summarize.py): per cell the median of REPEATS
# sweeps, interleaved (each a fresh process, the layouts' order reversed
# every other repeat), the anchors' median of ANCHOR_REPEATS.
# LOAD=loopback serves plain loopback instead (no stream limit, no
# delay), where no size helps, with pool:auto:K:K, a measured copy of
# each fixed size K that never resizes, beside pool:auto:1:8.
# LOAD=link puts an emulated link of RATE (default 50mbit) each way on
# every connection (the sweep's netem proxy, a link per connection it
# accepts; the anchors' links on the client's end, as policies run puts
# them) and pings of PAYLOAD (16384) bytes each way: one connection
# carries at most RATE / PAYLOAD RPC/s, so the right size is where the
# links' sum meets the load.
# LAYOUTS replaces the list of layouts (an A/A: the same one twice).
# uptime before each sweep goes to load.txt.
#
#   experiments/pool-known-answers/run.sh            # OUT=/tmp/pool-known-answers
#   INTERVAL=5s REPEATS=3 OUT=dir experiments/pool-known-answers/run.sh
#   LOAD=loopback ANCHOR_REPEATS=0 OUT=dir experiments/pool-known-answers/run.sh
#   LOAD=link INTERVAL=5s OUT=dir experiments/pool-known-answers/run.sh
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
REPEATS=${REPEATS:-3}
ANCHOR_REPEATS=${ANCHOR_REPEATS:-1}
LOAD=${LOAD:-limit}
case "$LOAD" in
  limit) serve_flags="--max-concurrent-streams 1 --delay 2ms"
    LAYOUTS=${LAYOUTS:-pool:1,pool:2,pool:4,pool:8,pool:auto:1:8} ;;
  loopback) serve_flags=""
    LAYOUTS=${LAYOUTS:-pool:1,pool:2,pool:4,pool:auto:1:1,pool:auto:2:2,pool:auto:1:8} ;;
  link) serve_flags=""
    LAYOUTS=${LAYOUTS:-pool:1,pool:2,pool:4,pool:8,pool:auto:1:8} ;;
  *) echo "run.sh: LOAD=$LOAD: want limit, loopback or link" >&2; exit 2 ;;
esac
RATE=${RATE:-50mbit}
PAYLOAD=${PAYLOAD:-16384}
# The same flags for rpclab sweep and policies run.
link=()
[ "$LOAD" = link ] && link=(--rate "$RATE" --payload "$PAYLOAD")
case "$REPEATS$ANCHOR_REPEATS" in *[!0-9]*) echo "run.sh: REPEATS and ANCHOR_REPEATS are whole numbers" >&2; exit 2 ;; esac
mkdir -p "$OUT"
if [ -e "$OUT/records-1.jsonl" ]; then
  echo "run.sh: $OUT/records-1.jsonl exists; remove it or set OUT" >&2
  exit 2
fi

bin="$OUT/bin"
mkdir -p "$bin"
(cd "$root" && nice -n 10 go build -o "$bin/rpclab" ./cmd/rpclab)
(cd "$root/bench/peers" && nice -n 10 go build -o "$bin/policies" ./cmd/policies)

# The server of the load, as a command peers can start as its "rpclab serve".
cat >"$bin/rpclab-capped" <<WRAP
#!/bin/sh
exec "$bin/rpclab" "\$@" $serve_flags
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

reversed=$(echo "$LAYOUTS" | tr ',' '\n' | tac | paste -sd, -)
records=()
for rep in $(seq 1 "$REPEATS"); do
  conns=$LAYOUTS
  [ $((rep % 2)) = 0 ] && conns=$reversed
  events=()
  case "$conns" in *auto*) events=(--pool-events "$OUT/pool-events-$rep.tsv") ;; esac
  echo "repeat $rep ($conns): $(uptime)" | tee -a "$OUT/load.txt" >&2
  taskset -c "$CLIENT_CPU" "$bin/rpclab" sweep --target "127.0.0.1:$port" \
    --conn "$conns" --inflight "$INFLIGHT" --warmup "$WARMUP" --interval "$INTERVAL" "${link[@]}" \
    -o "$OUT/records-$rep.jsonl" "${events[@]}" >"$OUT/sweep-$rep.txt" 2>"$OUT/sweep-$rep.log"
  records+=("$OUT/records-$rep.jsonl")
done
echo "end: $(uptime)" >>"$OUT/load.txt"

: >"$OUT/anchors.txt"
if [ "$ANCHOR_REPEATS" -gt 0 ]; then
  echo "anchors: $(uptime)" >>"$OUT/load.txt"
  taskset -c "$CLIENT_CPU" "$bin/policies" run --rpclab "$bin/rpclab-capped" --server-cpus "$SERVER_CPU" \
    --policies spanner,a105,yarpc --inflight "$INFLIGHT" --repeats "$ANCHOR_REPEATS" \
    --warmup "$ANCHOR_WARMUP" --interval "$INTERVAL" "${link[@]}" >"$OUT/anchors.txt" 2>"$OUT/anchors.log"
fi

python3 "$here/summarize.py" "$OUT/anchors.txt" "${records[@]}" | tee "$OUT/table.txt"
