#!/usr/bin/env bash
# What the adaptive pool's own machinery costs, with nothing to decide: a
# pool held at N connections (pool:auto:N:N, so it never grows, shrinks or
# parks) against the fixed pool:N, REPEATS interleaved repeats (the order
# alternates), each a fresh process, then every repeat's ratio and their
# range, for throughput and for client CPU per RPC (go run ./experiments/ratios
# --base pool:N). What differs is only what the adaptive mode adds: the
# write meter on each connection, two clock reads and an atomic add per
# RPC, the sampler and the control loop.
# Run it on a quiet machine; rpclab pins client and server apart.
#   REPEATS=5 N=8 INFLIGHT=8,64 OUT=adaptive-cost experiments/adaptive/cost.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${REPEATS:-5}
n=${N:-8}
out=${OUT:-${TMPDIR:-/tmp}/rpclab-adaptive-cost}
case "$n" in '' | *[!0-9]* | 0) echo "adaptive-cost.sh: N=$n: want a whole number from 1" >&2; exit 2 ;; esac
mkdir -p "$out"
nice -n 10 go build -o bin/rpclab ./cmd/rpclab
for rep in $(seq 1 "$repeats"); do
  conns="pool:$n,pool:auto:$n:$n"
  [ $((rep % 2)) = 0 ] && conns="pool:auto:$n:$n,pool:$n"
  echo "adaptive-cost: repeat $rep of $repeats ($conns)" >&2
  bin/rpclab sweep --conn "$conns" --inflight "${INFLIGHT:-8,64}" --warmup "${WARMUP:-10s}" \
    --interval "${INTERVAL:-4s}" --force -o "$out/cost-$rep.jsonl" >/dev/null
done
files=()
for rep in $(seq 1 "$repeats"); do files+=("$out/cost-$rep.jsonl"); done
nice -n 10 go run ./experiments/ratios --base "pool:$n" "${files[@]}"
