#!/usr/bin/env bash
# pool:8, pool:auto (1..8, 75 s to settle) and pool:auto:8:8 at 8 RPCs in
# flight, three repeats in turn, 6 s measured each, records beside this
# script (client CPU 0, server CPU 1). Run from anywhere after
# `go build -o bin/rpclab ./cmd/rpclab`.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
out=experiments/adaptive/2026-11-28b/inflight8
for rep in 1 2 3; do
  bin/rpclab sweep --conn pool:8 --inflight 8 --warmup 10s --interval 6s --force -o $out/fixed-$rep.jsonl >/dev/null 2>&1
  bin/rpclab sweep --conn pool:auto --inflight 8 --warmup 75s --interval 6s --force -o $out/auto-$rep.jsonl --pool-events $out/auto-$rep-events.tsv >/dev/null 2>&1
  bin/rpclab sweep --conn pool:auto:8:8 --inflight 8 --warmup 10s --interval 6s --force -o $out/auto88-$rep.jsonl >/dev/null 2>&1
done
