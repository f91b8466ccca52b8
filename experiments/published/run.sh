#!/usr/bin/env bash
# Our side of the published comparisons (README "Published tables beside
# ours"), each RUNS times (default 2), interleaved, into OUT:
#   - grpc-go's flow-control post: the first ten 1 MB RPCs per transport at
#     0, 16 and 64 ms RTT (rpclab flow);
#   - the Go gateway's ClientConn pool: closed loop at 50..500 callers, one
#     connection against pools (rpclab sweep);
#   - Gitaly's egress: 30 parallel downloads, gRPC against plain TCP and the
#     sidechannel (rpclab bulk).
# Then it prints the gateway's ratios run by run (experiments/ratios). Run it on a
# quiet machine; rpclab pins client and server to different CPUs.
#   RUNS=2 OUT=experiments/published/$(date +%F) experiments/published/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-2}
out=${OUT:-${TMPDIR:-/tmp}/rpclab-published}
mkdir -p "$out"
go build -o bin/rpclab ./cmd/rpclab
for i in $(seq 1 "$runs"); do
  echo "published: run $i of $runs" >&2
  bin/rpclab flow --transport grpc-dynamic,h2c,http1 --payload 1MiB --rtt 0,16ms,64ms --rpcs 10 --budget 60s \
    --force -o "$out/flow-first-10-$i.jsonl" > "$out/flow-first-10-$i.txt"
  bin/rpclab sweep --inflight 50,100,200,300,500 --conn shared,pool:2,pool:8,pool:50 --warmup 1s --interval 4s \
    --force -o "$out/gateway-$i.jsonl" > "$out/gateway-$i.txt"
  bin/rpclab bulk --transport grpc,tcp,sidechannel --size 64MiB --chunk 64KiB --streams 30 --duration 10s \
    --force --out "$out/bulk-30-streams-$i.jsonl" > "$out/bulk-30-streams-$i.txt"
done
go run ./experiments/ratios "$out"/gateway-*.jsonl
