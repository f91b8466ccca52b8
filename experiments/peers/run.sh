#!/usr/bin/env bash
# rpclab beside its peers, one table per comparison, every figure with its
# ratio to rpclab (docs/peers.md says what each measures and how).
#
#   experiments/peers/run.sh [loadgen|pools|netem|all]   (default all)
#   experiments/peers/run.sh policies   rpclab's pool under each sizing policy (rpclab's, Spanner's,
#                                   A105's, yarpc's; not part of all: about 2.6 hours at the defaults,
#                                   about 20 minutes with POLICY_PRESET=quick)
#   experiments/peers/run.sh ramp       an open-loop ramp up and back down on ONE pool per policy and per
#                                   fixed size 1, 2, 4, 8 (not part of all: about 45 minutes at the defaults)
#
# The server (or proxy) is pinned to the last CPU and every client to the
# others with taskset; a client's CPU is its whole process's user+sys, taken
# by the parent from wait4. The peers are installed here, at pinned
# versions, from the Go module proxy and Debian; nothing is committed. A
# peer that fails to install or run is reported in its row; the others run.
#
# Sizes (environment):
#   SECONDS_PER_RUN=10     loadgen: seconds per tool per cell and repeat
#   REPEATS=3              loadgen: runs of every tool per cell, the tools in rotating order each repeat;
#                          the table gives medians and the range of the per-repeat ratios
#   INFLIGHT=1,8,32,64     loadgen: in-flight counts
#   LAYOUTS=shared,per-worker
#   TOOLS=rpclab,ghz,grpc-client,h2load   loadgen: the tools to run (rpclab is every ratio's base)
#   CALLGRIND=0            loadgen: 1 = instructions per RPC under valgrind's callgrind instead of CPU time
#   CALLGRIND_RPCS=20000   with CALLGRIND=1: RPCs per run of ghz and h2load (rpclab and grpc-go's client run SECONDS_PER_RUN)
#   BENCHTIME=2s           pools: -benchtime per cell
#   POOL_BENCH=Pools       pools: Pools (calls) or Pick (the pick alone) or 'Pools|Pick'
#   NETEM_DELAYS=50us,1ms,16ms  NETEM_SAMPLES=2000  NETEM_RTT_BUDGET=20s  NETEM_BULK=5s
#   POLICY_INFLIGHT=1,2,4,8,16,32,64  POLICY_MAX=8  POLICY_INTERVAL=20s  POLICY_REPEATS=3
#   POLICY_WARMUP          unset: bin/policies run's own default, adaptive.Rule.SettleTime from 1 to 8 (1m32s)
#   POLICY_RATE=0  POLICY_DELAY=0s  POLICY_PAYLOAD=0   each connection's emulated bandwidth and delay
#                          (each way), and the pings' payload in bytes (policies run --rate ...)
#   POLICY_POLICIES=rpclab,spanner,a105,yarpc   policies: the sizing policies (the first is every
#                          ratio's base)
#   POLICY_PRESET=quick    policies: the defaults become POLICY_INFLIGHT=1,8,64 POLICY_INTERVAL=10s
#                          POLICY_REPEATS=1: 12 runs of 102 s, about 20 minutes (a POLICY_* given beside it
#                          still wins). The 1m32s warm-up lets rpclab's rule grow 1 -> 8 connections
#                          (adaptive.Rule.SettleTime, 1m32s: a 1 s decision, then 13 s a connection, a 12 s
#                          trial + 1 s decision); one repeat has no median: a smoke run, not a figure
#   RAMP_RATES=5000,10000,20000,40000,60000,80000   ramp: the rising rates (RPC/s); the ramp then falls
#                          back through them (11 steps)
#   RAMP_WARMUP=5s  RAMP_STEP=20s  RAMP_TAIL=4m  RAMP_MAX=8  RAMP_MAX_OUTSTANDING=2000  RAMP_FIXED=1,2,4,8
#   RAMP_POLICIES=rpclab,spanner,a105,yarpc  RAMP_REPEATS=1
#                          ramp: the first rate runs RAMP_WARMUP unrecorded, then each rate is held
#                          RAMP_STEP; after the last the load stops and an adaptive
#                          pool gets up to RAMP_TAIL to be back at its min (rpclab's rule retires one
#                          connection per 30 s idle: 7 -> 1 takes 3.5 minutes); RAMP_REPEATS > 1 runs
#                          every ramp that many times, interleaved, and gives each step's median P99
#   POLICY_EVENTS=FILE     policies: also write every run's decisions (time from its measured interval,
#                          the warm-up negative; resize, reason, the signals each was taken on) to FILE
#   RAMP_EVENTS=FILE       ramp: also write every adaptive run's decisions (time, step, resize, reason, the
#                          signals each was taken on) to FILE, one line each
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
what=${1:-all}
case "$what" in loadgen|pools|netem|policies|ramp|all) ;; *) echo "usage: $0 [loadgen|pools|netem|policies|ramp|all]" >&2; exit 2 ;; esac
case "${POLICY_PRESET:-}" in "" | quick) ;; *) echo "run.sh: POLICY_PRESET=$POLICY_PRESET: unknown (want quick)" >&2; exit 2 ;; esac

# Pinned peers: ghz's newest release on the module proxy; grpc-go's benchmark
# client at rpclab's own grpc-go version (read from go.mod); toxiproxy v2.
GHZ_VERSION=v0.93.0
TOXIPROXY_VERSION=v2.5.0
GRPC_VERSION=$(go list -m -f '{{.Version}}' google.golang.org/grpc)
tools="$root/.tools/peers"
mkdir -p "$tools"

last=$(( $(nproc) - 1 ))
server_cpus=$last
client_cpus="0-$(( last > 0 ? last - 1 : 0 ))"
[ "$last" -eq 0 ] && echo "run.sh: one CPU only: server and clients share it" >&2

note() { echo "run.sh: $*" >&2; }

# goinstall NAME PKG@VERSION: install into its own folder (grpc-go's client
# and toxiproxy's server would both be called "client"/"server"); prints the
# binary's path, or nothing if the install failed.
goinstall() {
  local name=$1 pkg=$2 dir="$tools/$1-${2##*@}"
  local bin="$dir/$(basename "${pkg%@*}")"
  if [ ! -x "$bin" ]; then
    if ! GOBIN="$dir" GOFLAGS=-mod=mod go install "$pkg" >"$tools/$name.install.log" 2>&1; then
      note "$name: go install $pkg failed (see $tools/$name.install.log)"
      return 0
    fi
  fi
  echo "$bin"
}

aptinstall() { # aptinstall CMD PACKAGE
  command -v "$1" >/dev/null && return 0
  note "installing Debian's $2"
  { apt-get install -y "$2" || { apt-get update && apt-get install -y "$2"; }; } >"$tools/$2.install.log" 2>&1 \
    || note "$2: apt-get install failed (see $tools/$2.install.log)"
}

go build -o bin/rpclab ./cmd/rpclab
(cd bench/peers && go build -o "$root/bin/peers" ./cmd/peers && go build -o "$root/bin/policies" ./cmd/policies)

run_loadgen() {
  local ghz grpcclient
  ghz=$(goinstall ghz "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION")
  grpcclient=$(goinstall grpc-client "google.golang.org/grpc/benchmark/client@$GRPC_VERSION")
  aptinstall h2load nghttp2-client
  local cg=()
  if [ "${CALLGRIND:-0}" = 1 ]; then
    aptinstall valgrind valgrind
    cg=(--callgrind --callgrind-rpcs "${CALLGRIND_RPCS:-20000}")
  fi
  taskset -c "$client_cpus" bin/peers loadgen --rpclab bin/rpclab --ghz "$ghz" --grpc-client "$grpcclient" \
    --h2load "$(command -v h2load || true)" --nghttp "$(command -v nghttp || true)" --proto-dir proto \
    --inflight "${INFLIGHT:-1,8,32,64}" --layouts "${LAYOUTS:-shared,per-worker}" --seconds "${SECONDS_PER_RUN:-10}" \
    --repeats "${REPEATS:-3}" --tools "${TOOLS:-rpclab,ghz,grpc-client,h2load}" \
    --server-cpus "$server_cpus" --client-cpus "$client_cpus" "${cg[@]}"
}

run_pools() {
  local t
  t=$(mktemp -d)
  (cd bench/peers && go test -c -o "$t/peers.test" .)
  # The server is rpclab itself in a child process on the server CPU; the
  # benchmark (every pool and its goroutines) on the client CPUs.
  (cd bench/peers && taskset -c "$client_cpus" "$t/peers.test" -test.run '^$' -test.bench "${POOL_BENCH:-Pools}" \
    -test.benchmem -test.benchtime "${BENCHTIME:-2s}" -peers.server "$root/bin/rpclab" -peers.server-cpus "$server_cpus") \
    | tee "$t/bench.txt" >&2 || note "pools: the benchmark failed (its output is above)"
  bin/peers pooltable <"$t/bench.txt"
  rm -rf "$t"
}

run_netem() {
  local tox
  tox=$(goinstall toxiproxy "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION")
  taskset -c "$client_cpus" bin/peers netem --rpclab bin/rpclab --toxiproxy "$tox" --proxy-cpus "$server_cpus" \
    --delays "${NETEM_DELAYS:-50us,1ms,16ms}" --samples "${NETEM_SAMPLES:-2000}" \
    --rtt-seconds "${NETEM_RTT_BUDGET:-20s}" --bulk "${NETEM_BULK:-5s}"
}

run_policies() {
  local inflight=1,2,4,8,16,32,64 interval=20s repeats=3
  [ "${POLICY_PRESET:-}" = quick ] && inflight=1,8,64 interval=10s repeats=1
  # The server is rpclab serve on the server CPU; every pool and its
  # callers on the client CPUs.
  taskset -c "$client_cpus" bin/policies run --rpclab bin/rpclab --server-cpus "$server_cpus" \
    --inflight "${POLICY_INFLIGHT:-$inflight}" --max "${POLICY_MAX:-8}" ${POLICY_WARMUP:+--warmup "$POLICY_WARMUP"} \
    --interval "${POLICY_INTERVAL:-$interval}" --repeats "${POLICY_REPEATS:-$repeats}" \
    --rate "${POLICY_RATE:-0}" --delay "${POLICY_DELAY:-0s}" --payload "${POLICY_PAYLOAD:-0}" \
    ${POLICY_POLICIES:+--policies "$POLICY_POLICIES"} ${POLICY_EVENTS:+--events "$POLICY_EVENTS"}
}

run_ramp() {
  # The server is rpclab serve on the server CPU; the pool, its pacer and
  # its senders on the client CPUs.
  taskset -c "$client_cpus" bin/policies ramp --rpclab bin/rpclab --server-cpus "$server_cpus" \
    --rates "${RAMP_RATES:-5000,10000,20000,40000,60000,80000}" --warmup "${RAMP_WARMUP:-5s}" \
    --step "${RAMP_STEP:-20s}" --tail "${RAMP_TAIL:-4m}" \
    --max "${RAMP_MAX:-8}" --max-outstanding "${RAMP_MAX_OUTSTANDING:-2000}" --fixed "${RAMP_FIXED-1,2,4,8}" \
    --policies "${RAMP_POLICIES:-rpclab,spanner,a105,yarpc}" --repeats "${RAMP_REPEATS:-1}" \
    ${RAMP_EVENTS:+--events "$RAMP_EVENTS"}
}

status=0
for part in loadgen pools netem policies ramp; do
  [ "$what" = "$part" ] || { [ "$what" = all ] && [ "$part" != policies ] && [ "$part" != ramp ]; } || continue
  echo
  "run_$part" || { status=1; note "$part: failed"; }
done
exit $status
