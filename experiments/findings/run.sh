#!/usr/bin/env bash
# Repeats the sweeps behind the ratios the README reads as findings RUNS times
# (default 3), interleaved so the machine's noise falls on every study alike,
# then prints each ratio run by run with its range (experiments/ratios).
# Run it on a quiet machine; rpclab pins client and server to different CPUs.
#   RUNS=3 OUT=findings experiments/findings/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
out=${OUT:-${TMPDIR:-/tmp}/rpclab-findings}
mkdir -p "$out"
go build -o bin/rpclab ./cmd/rpclab
step=(--warmup 1s --interval 3s --force)
for i in $(seq 1 "$runs"); do
  echo "findings: run $i of $runs" >&2
  # The demo's sweep: Go client, one shared connection against one per worker.
  bin/rpclab sweep --inflight 1,2,4,8,16,32 --conn shared,per-worker "${step[@]}" -o "$out/go-$i.jsonl"
  # The C++ client against rpclab's Go server (rpclab compare's C++ row).
  bin/rpclab sweep --client cpp --inflight 1,8,32 --conn shared,per-worker "${step[@]}" -o "$out/cpp-$i.jsonl"
  # C-core's trap and its fix, C++ client and server (clients/cpp/README.md).
  bin/rpclab sweep --client cpp --server cpp --inflight 1,4,8,32 --conn channel-per-worker,local-pool "${step[@]}" -o "$out/cpp-trap-$i.jsonl"
done
go run ./experiments/ratios "$out"/go-*.jsonl
echo
go run ./experiments/ratios "$out"/cpp-[0-9]*.jsonl
echo
go run ./experiments/ratios --base channel-per-worker "$out"/cpp-trap-*.jsonl
