#!/usr/bin/env bash
# Client CPU per RPC: rpclab's Go client against ghz, same server, same
# in-flight count and connections, side by side in one run. The server is
# pinned to the last CPU and each client to the others (taskset).
#
#   scripts/compare-ghz.sh [inflight=32] [seconds=10]
#
# Prints, per layout, each tool's RPCs, throughput, whole-process CPU
# (user+sys, measured by the parent with getrusage) and CPU µs per RPC,
# and the ratio rpclab/ghz.
set -euo pipefail
cd "$(dirname "$0")/.."
inflight=${1:-32}
secs=${2:-10}
tools="$PWD/.tools/bin"
[ -x "$tools/ghz" ] || GOBIN="$tools" go install github.com/bojand/ghz/cmd/ghz@v0.93.0
go build -o bin/rpclab ./cmd/rpclab
last=$(( $(nproc) - 1 )); client="0-$(( last > 0 ? last - 1 : 0 ))"
out=$(mktemp -d)
trap 'kill $srv 2>/dev/null; rm -rf "$out"' EXIT
bin/rpclab serve --listen 127.0.0.1:0 --cpus "$last" > "$out/serve.txt" &
srv=$!
for _ in $(seq 50); do grep -q listening "$out/serve.txt" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$out/serve.txt")

# cpu CMD...: run CMD, print its user+sys CPU seconds on fd 3.
cpu() {
  python3 - "$@" 3>&1 1>/dev/null <<'PY'
import os, resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=open(os.environ["OUTFILE"], "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
os.write(3, f"{r.ru_utime + r.ru_stime:.3f}".encode())
PY
}

printf '%-10s %-7s %10s %10s %8s %12s\n' layout tool rpcs "req/s" "cpu s" "cpu µs/rpc"
for layout in shared per-worker; do
  conns=1; [ "$layout" = per-worker ] && conns=$inflight
  export OUTFILE="$out/rpclab.txt"
  c1=$(cpu taskset -c "$client" bin/rpclab sweep --target "$addr" --conn "$layout" --inflight "$inflight" \
        --warmup 0s --interval "${secs}s" -o "$out/r.jsonl" --no-pin)
  n1=$(python3 -c "import json;r=json.loads(open('$out/r.jsonl').readline());print(r['requests'])")
  export OUTFILE="$out/ghz.json"
  c2=$(cpu taskset -c "$client" "$tools/ghz" --insecure --proto proto/grpc/testing/benchmark_service.proto \
        --import-paths proto --call grpc.testing.BenchmarkService.UnaryCall -d '{}' \
        -c "$inflight" --connections "$conns" -z "${secs}s" --format json "$addr")
  n2=$(python3 -c "import json;print(json.load(open('$out/ghz.json'))['count'])")
  for row in "rpclab $n1 $c1" "ghz $n2 $c2"; do
    set -- $row
    python3 -c "import sys;t,n,c=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]);print(f'%-10s %-7s %10d %10.0f %8.2f %12.1f'%('$layout',t,n,n/$secs,c,c/n*1e6))" "$@"
  done
  python3 -c "print(f'%-10s ratio rpclab/ghz cpu per rpc: %.2f'%('$layout',($c1/$n1)/($c2/$n2)))"
done
