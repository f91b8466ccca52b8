#!/usr/bin/env bash
# Does a layout's place in one rpclab sweep move its throughput? The same
# four layouts at 1 and 16 in flight, in experiments/adaptive/run.sh's order and
# reversed, alternating, two repeats each (client CPU 0, server CPU 1).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
out=experiments/adaptive/2026-11-28b/order
for rep in 1 2; do
  bin/rpclab sweep --conn shared,pool:2,pool:4,pool:8 --inflight 1,16 --warmup 10s --interval 2s --force -o $out/forward-$rep.jsonl >/dev/null 2>&1
  bin/rpclab sweep --conn pool:8,pool:4,pool:2,shared --inflight 1,16 --warmup 10s --interval 2s --force -o $out/reverse-$rep.jsonl >/dev/null 2>&1
done
