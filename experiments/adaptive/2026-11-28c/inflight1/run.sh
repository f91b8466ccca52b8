#!/usr/bin/env bash
# Why pool:auto measured 0.78-0.84 of shared at 1 in flight in the closed
# loop's second run, on the same one connection: the long warm-up (75 s, a
# process 65 s older when measured) or the adaptive machinery? Per repeat,
# each a fresh process, the order rotating: shared and pool:auto:1:1 after
# 10 s, shared and pool:auto (1..8) after 75 s, 2 s measured, 1 in flight.
# Run from the repository root on a quiet machine.
set -euo pipefail
out=experiments/adaptive/2026-11-28c/inflight1
go build -o bin/rpclab ./cmd/rpclab
arms=("shared 10s" "pool:auto:1:1 10s" "shared 75s" "pool:auto 75s")
for rep in 1 2 3; do
  for i in 0 1 2 3; do
    set -- ${arms[$(((i + rep) % 4))]}
    echo "inflight1: repeat $rep: $1 after $2" >&2
    bin/rpclab sweep --conn "$1" --inflight 1 --warmup "$2" --interval 2s --force \
      -o "$out/$rep-${1//:/_}-$2.jsonl" >/dev/null
  done
done
for f in "$out"/*.jsonl; do
  printf '%s\t' "$(basename "$f" .jsonl)"
  jq -r 'select(.kind == "ping") | "\(.throughput_rps | floor) rpc/s\t\(.client_cpu_ns_per_rpc / 1000 * 10 | floor / 10) µs/rpc\tconns \(.conns_observed)"' "$f"
done
