#!/usr/bin/env bash
# Issue 27's closed-loop check: the adaptive pool (pool:auto) against the
# fixed layouts, RUNS runs of REPEATS interleaved repeats each, then, per
# run, pool:auto's median throughput and client CPU per RPC over the best
# fixed layout's at every in-flight count (go run ./scripts/ratios --best).
# The fixed layouts get a short warm-up; pool:auto one long enough for its
# trials (AUTO_WARMUP: a trial is measured for Rule.TrialTime = 4s, the
# pool running with and without the trial connection in turn, then
# Rule.Cooldown = 5s passes before the next, so 1 -> 3 connections needs
# about 21 s, 1 -> 8 about 71 s: doctor.SettleTime).
# Run it on a quiet machine; rpclab pins client and server apart.
#   RUNS=2 REPEATS=3 OUT=adaptive scripts/adaptive.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-2}
repeats=${REPEATS:-3}
out=${OUT:-adaptive}
inflight=${INFLIGHT:-1,2,4,8,16,32,64}
interval=${INTERVAL:-2s}
mkdir -p "$out"
go build -o bin/rpclab ./cmd/rpclab
for run in $(seq 1 "$runs"); do
  for rep in $(seq 1 "$repeats"); do
    echo "adaptive: run $run of $runs, repeat $rep of $repeats" >&2
    bin/rpclab sweep --conn shared,pool:2,pool:4,pool:8 --inflight "$inflight" --warmup "${FIXED_WARMUP:-1s}" \
      --interval "$interval" --force -o "$out/fixed-$run-$rep.jsonl" >/dev/null
    bin/rpclab sweep --conn pool:auto --inflight "$inflight" --warmup "${AUTO_WARMUP:-16s}" \
      --interval "$interval" --force -o "$out/auto-$run-$rep.jsonl" >/dev/null
  done
done
for run in $(seq 1 "$runs"); do
  echo "run $run:"
  go run ./scripts/ratios --best pool:auto "$out"/fixed-"$run"-*.jsonl "$out"/auto-"$run"-*.jsonl
  echo
done
