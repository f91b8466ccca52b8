#!/usr/bin/env bash
# Instructions per RPC of a settled adaptive pool against the same fixed
# size, counted by valgrind's callgrind: pool's BenchmarkUnaryHeld
# (WithAdaptive(N, N), which never resizes, beside WithSize(N)) runs with
# RPCS and 2*RPCS calls per mode; the difference of the two counts over
# RPCS is the steady state's instructions per RPC, start-up and shut-down
# cancelled. The server is rpclab serve in its own process on CPU
# SERVER_CPU (not counted), the benchmark on CLIENT_CPU. Under callgrind a
# second of the sampler's and control loop's wall-clock work spans about
# fifty times fewer RPCs than natively, so their share here is an upper
# bound.
#
#   experiments/adaptive/callgrind.sh
#   RPCS=20000 CASES=conns=2/parallel=8,conns=8/parallel=64 experiments/adaptive/callgrind.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
rpcs=${RPCS:-10000}
cases=${CASES:-conns=2/parallel=8,conns=8/parallel=64}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
case "$rpcs" in '' | *[!0-9]* | 0) echo "callgrind.sh: RPCS=$rpcs: want a whole number from 1" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$work"' EXIT
nice -n 10 go build -o "$work/rpclab" ./cmd/rpclab
(cd pool && nice -n 10 go test -c -o "$work/pool.test" .)

taskset -c "$SERVER_CPU" "$work/rpclab" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
srv=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/serve.out" && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$work/serve.out" | head -1)
[ -n "$addr" ] || { echo "callgrind.sh: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }

# instr CASE MODE N: callgrind's total instruction count of one run.
instr() {
  local out="$work/cg.${1//\//_}.$2.$3"
  # Go's asynchronous preemption signals trip callgrind's signal
  # bookkeeping; without them Go runs.
  taskset -c "$CLIENT_CPU" env GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$work/pool.test" -test.run '^$' -test.bench "^BenchmarkUnaryHeld\$/^${1//\//\$/^}\$/^$2\$" \
    -test.benchtime "$3x" -pool.target "$addr" >"$out.log" 2>&1 \
    || { echo "callgrind.sh: $1/$2 failed: $(tail -3 "$out.log")" >&2; return 1; }
  grep -q "$1/$2" "$out.log" || { echo "callgrind.sh: $1/$2 ran no benchmark" >&2; return 1; }
  sed -n 's/^summary: //p' "$out"
}

echo "instructions per RPC of the client process (callgrind, difference of runs of $rpcs and $((2 * rpcs)) calls); server rpclab serve on CPU $SERVER_CPU, client on CPU $CLIENT_CPU; $(uptime)"
printf '%-22s %12s %12s %8s\n' case fixed adaptive ratio
IFS=, read -ra cs <<<"$cases"
for c in "${cs[@]}"; do
  declare -A per=()
  for m in fixed adaptive; do
    a=$(instr "$c" "$m" "$rpcs") && b=$(instr "$c" "$m" $((2 * rpcs))) || { per[$m]=0; continue; }
    per[$m]=$(( (b - a) / rpcs ))
  done
  ratio=$(awk -v a="${per[adaptive]}" -v f="${per[fixed]}" 'BEGIN { if (f > 0) printf "%.4f", a / f; else print "-" }')
  printf '%-22s %12s %12s %8s\n' "$c" "${per[fixed]}" "${per[adaptive]}" "$ratio"
done
