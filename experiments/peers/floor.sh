#!/usr/bin/env bash
# Instructions per RPC of rpclab's closed-loop worker beside grpc-go's own
# benchmark client's loop, counted by valgrind's callgrind (docs/peers.md,
# "The floor"). Each path runs in loadgen's BenchmarkUnaryRPC twice, with N
# and 2N calls, under callgrind; the difference of the two counts over N is
# the steady state's instructions per RPC, start-up and shut-down cancelled.
# The server is rpclab serve in its own process on the last CPU (not
# counted); the benchmark on the others.
#
#   experiments/peers/floor.sh
#
# Sizes (environment):
#   FLOOR_RPCS=10000                     N
#   FLOOR_PATHS=grpc-client,worker,run-ctx
#   FLOOR_INFLIGHT=1,8,32,64
#   FLOOR_CONNS=shared,per-worker        one connection, or one per in-flight RPC
set -euo pipefail
cd "$(dirname "$0")/../.."
rpcs=${FLOOR_RPCS:-10000}
last=$(( $(nproc) - 1 ))
client_cpus="0-$(( last > 0 ? last - 1 : 0 ))"
work=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$work"' EXIT

command -v valgrind >/dev/null || { echo "floor.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
go build -o "$work/rpclab" ./cmd/rpclab
go test -c -o "$work/loadgen.test" ./loadgen

taskset -c "$last" "$work/rpclab" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
srv=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/serve.out" && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$work/serve.out" | head -1)
[ -n "$addr" ] || { echo "floor.sh: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }

# instr PATH N INFLIGHT CONN: callgrind's total instruction count of one run.
instr() {
  local out="$work/cg.$1.$2.$3.$4"
  # Go's asynchronous preemption signals trip callgrind 3.19's signal
  # bookkeeping; without them Go runs.
  taskset -c "$client_cpus" env GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$work/loadgen.test" -test.run '^$' -test.bench "^BenchmarkUnaryRPC\$/^path=$1\$/^conn=$4\$/^inflight=$3\$" \
    -test.benchtime "$2x" -loadgen.target "$addr" >"$out.log" 2>&1 \
    || { echo "floor.sh: path=$1 conn=$4 inflight=$3 failed: $(tail -3 "$out.log")" >&2; return 1; }
  sed -n 's/^summary: //p' "$out"
}

echo "instructions per RPC of the client process (valgrind --tool=callgrind, difference of runs of $rpcs and $((2 * rpcs)) calls); server rpclab serve on CPU $last"
printf '%-12s %-11s %8s %12s %14s\n' path conn inflight instr/rpc x/grpc-client
IFS=, read -ra inflight <<<"${FLOOR_INFLIGHT:-1,8,32,64}"
IFS=, read -ra paths <<<"${FLOOR_PATHS:-grpc-client,worker,run-ctx}"
IFS=, read -ra conns <<<"${FLOOR_CONNS:-shared,per-worker}"
for c in "${conns[@]}"; do
  for n in "${inflight[@]}"; do
    base=
    for p in "${paths[@]}"; do
      a=$(instr "$p" "$rpcs" "$n" "$c") && b=$(instr "$p" $((2 * rpcs)) "$n" "$c") \
        || { printf '%-12s %-11s %8s %12s\n' "$p" "$c" "$n" FAILED; continue; }
      per=$(( (b - a) / rpcs ))
      [ "$p" = grpc-client ] && base=$per
      ratio=-
      [ -n "$base" ] && ratio=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
      printf '%-12s %-11s %8s %12s %14s\n' "$p" "$c" "$n" "$per" "$ratio"
    done
  done
done
