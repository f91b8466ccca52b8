#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Issue 29's "done when" measurement: RUNS runs; in each, ROUNDS rounds of
#
#   rpclab bulk --size 1GiB --chunk 64KiB --transport tcp,grpc,grpc-tuned,sidechannel
#
# in plaintext and with --tls (TCP over TLS the reference), the two
# alternating round by round so a drift of the machine hits both, then the
# allocation steps (64MiB,256MiB,1GiB) once per run in each mode. The
# records and each command's output go into OUT; go run ./experiments/bulk/summary
# prints, per run, the median and range over the rounds of each
# transport's MB/s over TCP's (round by round) and of its CPU per GiB, and
# the bytes allocated per MiB by size (O(1) per request reads as bytes per
# MiB falling as the size grows). The summary is also kept in OUT/summary.txt.
#
# Run it on a quiet machine (about 2 x 5 x 2 x 4 x REQUESTS GiB of
# downloads); rpclab bulk pins the client and the server apart.
#
#   experiments/bulk/run.sh                          # 5 rounds x 2 runs
#   ROUNDS=1 RUNS=1 SIZE=16MiB ALLOC_SIZES=4MiB,16MiB REQUESTS=1 experiments/bulk/run.sh   # a check
#
# Settings (environment): ROUNDS (5), RUNS (2), SIZE (1GiB), CHUNK (64KiB),
# TRANSPORTS (tcp,grpc,grpc-tuned,sidechannel), REQUESTS (3 downloads per
# step), ALLOC_SIZES (64MiB,256MiB,1GiB), OUT ($TMPDIR/rpclab-bulkfix-<UTC time>), RPCLAB
# (an rpclab binary; default: built from this checkout into OUT).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-2}
SIZE=${SIZE:-1GiB}
CHUNK=${CHUNK:-64KiB}
TRANSPORTS=${TRANSPORTS:-tcp,grpc,grpc-tuned,sidechannel}
REQUESTS=${REQUESTS:-3}
ALLOC_SIZES=${ALLOC_SIZES:-64MiB,256MiB,1GiB}
OUT=${OUT:-${TMPDIR:-/tmp}/rpclab-bulkfix-$(date -u +%Y%m%dT%H%M%SZ)}

for v in ROUNDS RUNS REQUESTS; do
  if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
    echo "bulk/run.sh: $v=${!v}: want a positive integer" >&2
    exit 2
  fi
done

root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -e $OUT ]] && [[ -n $(ls -A "$OUT" 2>/dev/null) ]]; then
  echo "bulk/run.sh: $OUT exists and is not empty: choose another OUT" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [[ -z ${RPCLAB:-} ]]; then
  RPCLAB=$OUT/rpclab
  (cd "$root" && go build -o "$RPCLAB" ./cmd/rpclab)
fi

# bulk MODE FILE ARGS...: one rpclab bulk command into FILE.jsonl and FILE.txt.
bulk() {
  local mode=$1 file=$2
  shift 2
  local tls=()
  [[ $mode == tls ]] && tls=(--tls)
  mkdir -p "$(dirname "$file")"
  echo "bulk/run.sh: $file ($mode)" >&2
  "$RPCLAB" bulk --chunk "$CHUNK" --transport "$TRANSPORTS" --requests "$REQUESTS" "${tls[@]}" "$@" \
    --out "$file.jsonl" >"$file.txt" 2>&1 || {
    echo "bulk/run.sh: $file failed:" >&2
    tail -5 "$file.txt" >&2
    exit 1
  }
}

for run in $(seq 1 "$RUNS"); do
  for round in $(seq 1 "$ROUNDS"); do
    for mode in plain tls; do
      bulk "$mode" "$OUT/run$run/$mode/round$round" --size "$SIZE"
    done
  done
  for mode in plain tls; do
    bulk "$mode" "$OUT/run$run/$mode/alloc" --size "$ALLOC_SIZES"
  done
done

(cd "$root" && go run ./experiments/bulk/summary "$OUT") | tee "$OUT/summary.txt"
