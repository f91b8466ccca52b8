#!/usr/bin/env bash
# Issue 27's closed-loop check: the adaptive pool (pool:auto) against the
# fixed layouts, RUNS runs of REPEATS interleaved repeats each, then, per
# run, pool:auto's median throughput and client CPU per RPC over the best
# fixed layout's at every in-flight count (go run ./experiments/ratios --best).
# The fixed layouts get FIXED_WARMUP (default 10s; 5s with ORDER=process); pool:auto one long
# enough for its trials (AUTO_WARMUP: a trial is measured for
# Rule.TrialTime = 12s, the pool running with and without the trial
# connection in turn, then a decision interval before the next, so
# 1 -> 3 connections needs about 27 s, 1 -> 8 about 1m32s:
# adaptive.Rule.SettleTime).
# ORDER=count (the default) interleaves per in-flight count: each count's
# fixed sweep and pool:auto run back to back, which goes first alternating,
# each a fresh process, so the two sides of a ratio are measured minutes
# apart at most. ORDER=sweep runs all counts of the fixed layouts, then all
# of pool:auto (how experiments/adaptive/2026-11-24/adaptive-paired was measured,
# with FIXED_WARMUP=1s): cheaper, but the sides are up to ten minutes apart
# and the fixed layouts' first count runs on a cold process.
# The fixed layouts run in one process, one after another, their order
# rotated by one at each count and repeat: on 2026-11-30 the layout run
# second in every process (pool:2) measured 1.08-1.34x the first (shared)
# at 1 RPC in flight, where the two do the same work, in three runs.
# ORDER=process runs all five layouts in one process per count and
# repeat, issue 27's own command (rpclab sweep --conn
# shared,pool:2,pool:4,pool:8,pool:auto) one count at a time, their order
# rotated by one at each count and repeat: the fixed layouts warm up for
# FIXED_WARMUP (default 5s), pool:auto until it can settle at the count
# (rpclab sweep's --auto-warmup default: adaptive.Rule.SettleTime, 1m32s at 8
# or more in flight), so the five sides of a count's ratios are measured
# within three and a half minutes in one process. Files: one-RUN-REP-COUNT.
# Each pool:auto run's decisions (rpclab sweep --pool-events) are kept beside
# its records as auto-RUN-REP-COUNT-events.tsv.
# AUTO (default pool:auto) is the candidate's layout. AUTO=pool:auto:2:2, an
# adaptive pool held at two connections (min = max: it never resizes, its
# write meter and control loop run), is a copy of pool:2 measured as the
# candidate is: how often the bars hold for a layout against its own copy
# (experiments/adaptive/2026-12-02/adaptive-aa).
# Run it on a quiet machine; rpclab pins client and server apart.
#   RUNS=2 REPEATS=3 OUT=adaptive experiments/adaptive/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-2}
repeats=${REPEATS:-3}
out=${OUT:-${TMPDIR:-/tmp}/rpclab-adaptive}
inflight=${INFLIGHT:-1,2,4,8,16,32,64}
interval=${INTERVAL:-2s}
mkdir -p "$out"
go build -o bin/rpclab ./cmd/rpclab
order=${ORDER:-count}
cand=${AUTO:-pool:auto}
case "$cand" in pool:auto|pool:auto:*) ;; *) echo "adaptive.sh: AUTO=$cand: want pool:auto or pool:auto:MIN:MAX" >&2; exit 2 ;; esac
case "$order" in count|sweep|process) ;; *) echo "adaptive.sh: ORDER=$order: want count, sweep or process" >&2; exit 2 ;; esac
layouts=(shared pool:2 pool:4 pool:8)
fixed() { # counts, output file, rotation
  local conns="" i
  for i in 0 1 2 3; do conns+="${conns:+,}${layouts[$(((i + ${3:-0}) % 4))]}"; done
  bin/rpclab sweep --conn "$conns" --inflight "$1" --warmup "${FIXED_WARMUP:-10s}" \
    --interval "$interval" --force -o "$2" >/dev/null
}
auto() { # counts, output file (the pool's decisions beside it, .tsv)
  bin/rpclab sweep --conn "$cand" --inflight "$1" --warmup "${AUTO_WARMUP:-130s}" \
    --interval "$interval" --force -o "$2" --pool-events "${2%.jsonl}-events.tsv" >/dev/null
}
one() { # count, output file (the pool's decisions beside it, .tsv), rotation
  local all=(shared pool:2 pool:4 pool:8 "$cand") conns="" i
  for i in 0 1 2 3 4; do conns+="${conns:+,}${all[$(((i + $3) % 5))]}"; done
  bin/rpclab sweep --conn "$conns" --inflight "$1" --warmup "${FIXED_WARMUP:-5s}" \
    --interval "$interval" --force -o "$2" --pool-events "${2%.jsonl}-events.tsv" >/dev/null
}
for run in $(seq 1 "$runs"); do
  for rep in $(seq 1 "$repeats"); do
    echo "adaptive: run $run of $runs, repeat $rep of $repeats" >&2
    if [ "$order" = process ]; then
      k=$rep
      for c in ${inflight//,/ }; do
        k=$((k + 1))
        one "$c" "$out/one-$run-$rep-$c.jsonl" "$k"
      done
      continue
    fi
    if [ "$order" = sweep ]; then
      fixed "$inflight" "$out/fixed-$run-$rep.jsonl" "$rep"
      auto "$inflight" "$out/auto-$run-$rep.jsonl"
      continue
    fi
    k=$rep
    for c in ${inflight//,/ }; do
      k=$((k + 1))
      if [ $((k % 2)) = 0 ]; then
        fixed "$c" "$out/fixed-$run-$rep-$c.jsonl" "$k"
        auto "$c" "$out/auto-$run-$rep-$c.jsonl"
      else
        auto "$c" "$out/auto-$run-$rep-$c.jsonl"
        fixed "$c" "$out/fixed-$run-$rep-$c.jsonl" "$k"
      fi
    done
  done
done
for run in $(seq 1 "$runs"); do
  echo "run $run:"
  if [ "$order" = process ]; then
    go run ./experiments/ratios --best pool:auto "$out"/one-"$run"-*.jsonl
  else
    go run ./experiments/ratios --best pool:auto "$out"/fixed-"$run"-*.jsonl "$out"/auto-"$run"-*.jsonl
  fi
  echo
done
