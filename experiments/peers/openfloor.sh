#!/usr/bin/env bash
# rpclab's open loop beside grpc-go's own open loop at the same offered
# Poisson rates, on one connection and on one per worker (docs/peers.md,
# "The open loop's floor"); every ratio is rpclab's over grpc-go's from the
# same run, the two tools interleaved (A B A B...).
#
#   experiments/peers/openfloor.sh [cpu|workers|all]   (default all)
#
#   cpu:       loadgen's BenchmarkOpenLoop, path=open (rpclab sweep --rps's
#              step) and path=open-timer (the same, --pacing timer) beside
#              path=grpc-open (grpc-go's worker's Poisson loop body, CONNS
#              chains on one connection or one each), all on one
#              connection or CONNS,
#              OPENFLOOR_SECONDS of sends per run: the client process's CPU
#              (user+sys, all threads) per RPC, and the rate each achieved.
#              (Not callgrind: an open loop's instructions are mostly its
#              idle wake-ups, which a client slowed 50x does not reproduce;
#              docs/peers.md says what a try gave.)
#   workers:   the real binaries: grpc-go's benchmark worker
#              (~/.cache/rpclab/grpc-go-benchmark-worker-VERSION, built by
#              go test ./internal/worker) and rpclab worker, each driven alone by
#              rpclab sweep --workers --rps R --arrival poisson: the worker's
#              CPU per RPC over the interval (its getrusage, as it reports
#              to the driver). Both run CONNS callers (--inflight CONNS:
#              shared is one channel with CONNS outstanding RPCs,
#              per-worker CONNS channels with one); grpc-go's worker sends
#              offered_load from each of them, so it is given R/CONNS to
#              offer R in all, where rpclab's splits R over its callers.
#
# The server is rpclab serve on the last CPU; clients on the others.
#
# Sizes (environment):
#   OPENFLOOR_RATES=1000,4000,10000   cpu and workers: offered RPCs per second
#   OPENFLOOR_SECONDS=3               cpu and workers: seconds of sends per run
#   OPENFLOOR_REPS=2                  cpu and workers: A B pairs per cell
#   OPENFLOOR_CONNS=8                 connections of per-worker
#   OPENFLOOR_LAYOUTS=shared,per-worker
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
case "$what" in cpu|workers|all) ;; *) echo "usage: $0 [cpu|workers|all]" >&2; exit 2 ;; esac

rates=${OPENFLOOR_RATES:-1000,4000,10000}
seconds=${OPENFLOOR_SECONDS:-3}
reps=${OPENFLOOR_REPS:-2}
conns=${OPENFLOOR_CONNS:-8}
layouts=${OPENFLOOR_LAYOUTS:-shared,per-worker}
positive() { # NAME VALUE...: each value a positive number, or exit 2 naming it
  local name=$1 v; shift
  for v in "$@"; do
    awk -v v="$v" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]+)?$/ && v > 0) }' \
      || { echo "openfloor.sh: $name: $v is not a positive number" >&2; exit 2; }
  done
}
IFS=, read -ra rate_list <<<"$rates"
IFS=, read -ra layout_list <<<"$layouts"
positive OPENFLOOR_RATES "${rate_list[@]}"
positive OPENFLOOR_SECONDS "$seconds"
positive OPENFLOOR_REPS "$reps"
positive OPENFLOOR_CONNS "$conns"
for l in "${layout_list[@]}"; do
  case "$l" in shared|per-worker) ;; *) echo "openfloor.sh: OPENFLOOR_LAYOUTS: unknown layout $l (want shared or per-worker)" >&2; exit 2 ;; esac
done

last=$(( $(nproc) - 1 ))
client_cpus="0-$(( last > 0 ? last - 1 : 0 ))"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

go build -o "$work/rpclab" ./cmd/rpclab
go test -c -o "$work/loadgen.test" ./loadgen

# start NAME CMD...: runs CMD in the background and sets started to the
# address of its first "listening on ADDR" line.
start() {
  local name=$1; shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^listening on ' "$work/$name.out" && break; sleep 0.1; done
  started=$(sed -n 's/^listening on //p' "$work/$name.out" | head -1)
  [ -n "$started" ] || { echo "openfloor.sh: $name did not start: $(cat "$work/$name.err")" >&2; exit 1; }
}
start serve taskset -c "$last" "$work/rpclab" serve --listen 127.0.0.1:0
addr=$started

# ratio A B: A/B to three places, or - unless both are numbers and B > 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { n = "^[0-9]+(\\.[0-9]+)?$"; if (a ~ n && b ~ n && b > 0) printf "%.3f", a / b; else printf "-" }'; }
# range: the min-max of the numbers on stdin (one a line), "-" if none.
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR == 0) print "-"; else if (lo == hi) printf "%s", lo; else printf "%s-%s", lo, hi }'; }
# sends RATE SECONDS: the whole number of sends of SECONDS at RATE.
sends() { awk -v r="$1" -v s="$2" 'BEGIN { printf "%d", r * s + 0.5 }'; }

# bench PATH LAYOUT RATE N: one BenchmarkOpenLoop run; prints
# "CPU_NS_PER_RPC RPS CSW_PER_RPC LAT_P50_US" (from its output line: CPU
# per RPC, the rate achieved, the process's context switches per RPC, and
# for rpclab's paths the latency P50 from the intended send, "-" for
# grpc-open) or fails.
bench() {
  local p=$1 l=$2 r=$3 n=$4
  local log="$work/b.$p.$l.$r.$n.$RANDOM"
  taskset -c "$client_cpus" "$work/loadgen.test" -test.run '^$' \
    -test.bench "^BenchmarkOpenLoop\$/^path=$p\$/^conn=$l\$/^rate=$r\$" -test.benchtime "${n}x" \
    -loadgen.target "$addr" -loadgen.rates "$r" -loadgen.conns "$conns" >"$log" 2>&1 \
    || { echo "openfloor.sh: path=$p conn=$l rate=$r failed: $(tail -3 "$log")" >&2; return 1; }
  awk '/^BenchmarkOpenLoop/ { for (i = 1; i < NF; i++) { if ($(i+1) == "rpcs/s") r = $i; if ($(i+1) == "cpu-ns/rpc") c = $i; if ($(i+1) == "csw/rpc") w = $i; if ($(i+1) == "lat-p50-us") q = $i } } END { if (c == "") exit 1; printf "%d %d %s %s\n", c, r, (w == "" ? "-" : w), (q == "" ? "-" : q) }' "$log"
}

# match ACHIEVED OFFERED WANT CHAINS: the total rate to offer grpc-go's
# open loop of CHAINS chains so that it achieves WANT, from one run that
# achieved ACHIEVED when offered OFFERED. Each chain draws its next gap
# from when its timer fired, so every send adds the timer's lateness L to
# its gap: a chain offered o achieves 1/(1/o + L). L is solved from the
# run, and the offer that achieves WANT is 1/(1/want - L) per chain (at
# most 4x WANT in all; OFFERED again when nothing was achieved). Its rows
# then run at the rate rpclab's achieve, which matters because an open
# loop's CPU per RPC falls as the rate rises.
match() {
  awk -v a="$1" -v o="$2" -v w="$3" -v k="$4" 'BEGIN {
    if (!(a > 0)) { printf "%g", o; exit }
    late = k / a - k / o; g = k / w - late
    x = (g > 0) ? k / g : 4 * w
    if (x > 4 * w) x = 4 * w
    if (x < w) x = w
    printf "%g", x }'
}

# The rpclab paths beside path=grpc-open: open (rpclab sweep --rps's
# default pacing) and open-timer (--pacing timer).
rl_paths=(open open-timer)

if [ "$what" = cpu ] || [ "$what" = all ]; then
  echo "== client CPU per RPC in ns (user+sys of the whole client process, getrusage), $seconds s of Poisson sends per run, $reps rounds of grpc-open ${rl_paths[*]} after one run of grpc-open to match its achieved rate (grpc-offer: what it is offered); csw: the client process's context switches per RPC (its wake-ups); lat-p50-us: rpclab's median latency from the intended send; server rpclab serve on CPU $last, clients on $client_cpus; last column: the rates achieved, each round's grpc-open/open/open-timer"
  printf '%-11s %8s %10s %14s' conn rate grpc-offer grpc-open
  for p in "${rl_paths[@]}"; do printf ' %14s %16s' "$p" "$p/grpc"; done
  printf ' %12s' csw/grpc-open
  for p in "${rl_paths[@]}"; do printf ' %12s %14s' "csw/$p" "lat-p50-us/$p"; done
  printf '  %s\n' 'achieved req/s'
  for l in "${layout_list[@]}"; do
    for r in "${rate_list[@]}"; do
      n=$(sends "$r" "$seconds")
      rm -f "$work"/cpu.* "$work"/csw.* "$work"/lat.*
      g=$(bench grpc-open "$l" "$r" "$n") || g=
      read -r _ grps _ <<<"${g:-- -}"
      gr=$(match "$grps" "$r" "$r" "$conns")
      for _ in $(seq "$reps"); do
        g=$(bench grpc-open "$l" "$gr" "$n") || g=
        read -r gc grps gw _ <<<"${g:-- - - -}"
        [ -n "$g" ] && { echo "$gc" >>"$work/cpu.grpc-open"; echo "$gw" >>"$work/csw.grpc-open"; }
        got=$grps
        for p in "${rl_paths[@]}"; do
          o=$(bench "$p" "$l" "$r" "$n") || o=
          read -r oc orps ow oq <<<"${o:-- - - -}"
          [ -n "$o" ] && { echo "$oc" >>"$work/cpu.$p"; echo "$ow" >>"$work/csw.$p"; echo "$oq" >>"$work/lat.$p"; }
          [ -n "$g" ] && [ -n "$o" ] && { ratio "$oc" "$gc"; echo; } >>"$work/cpu.$p.x"
          got="$got/$orps"
        done
        echo "$got" >>"$work/cpu.rps"
      done
      printf '%-11s %8s %10s %14s' "$l" "$r" "$gr" "$(cat "$work/cpu.grpc-open" 2>/dev/null | range)"
      for p in "${rl_paths[@]}"; do
        printf ' %14s %16s' "$(cat "$work/cpu.$p" 2>/dev/null | range)" "$(grep -v '^-\?$' "$work/cpu.$p.x" 2>/dev/null | range)"
      done
      printf ' %12s' "$(cat "$work/csw.grpc-open" 2>/dev/null | range)"
      for p in "${rl_paths[@]}"; do
        printf ' %12s %14s' "$(cat "$work/csw.$p" 2>/dev/null | range)" "$(cat "$work/lat.$p" 2>/dev/null | range)"
      done
      printf '  %s\n' "$(paste -sd' ' "$work/cpu.rps")"
    done
  done
fi

if [ "$what" = workers ] || [ "$what" = all ]; then
  ver=$(go list -m -f '{{.Version}}' google.golang.org/grpc)
  official="${XDG_CACHE_HOME:-$HOME/.cache}/rpclab/grpc-go-benchmark-worker-$ver"
  echo "== the real workers, each driven alone by rpclab sweep --workers --rps R --arrival poisson (warm-up 1 s, interval $seconds s): the worker's CPU per RPC (its getrusage over the interval), $reps A B pairs after one run of grpc-go's to match its achieved rate (grpc-offer: the offered_load of each of its $conns callers)"
  if [ ! -x "$official" ]; then
    echo "grpc-go's worker $ver: not built ($official; go test ./internal/worker builds it): FAILED"
  else
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    taskset -c "$client_cpus" "$official" -driver_port "$port" >"$work/official.out" 2>&1 &
    pids+=($!)
    gw=127.0.0.1:$port
    start rworker taskset -c "$client_cpus" "$work/rpclab" worker --driver-port 0 --host 127.0.0.1
    rw=$started
    sleep 1 # grpc-go's worker says nothing when it listens
    # worker ADDR LAYOUT RATE: "RPS CPU_NS_PER_RPC" of one step.
    worker() {
      local out="$work/w.$RANDOM.jsonl"
      taskset -c "$client_cpus" "$work/rpclab" sweep --workers "$1" --target "$addr" --conn "$2" --inflight "$conns" \
        --rps "$3" --arrival poisson --warmup 1s --interval "${seconds}s" -o "$out" >"$out.log" 2>&1 \
        || { echo "openfloor.sh: worker $1 conn=$2 rate=$3 failed: $(tail -3 "$out.log")" >&2; return 1; }
      jq -r 'select(.requests > 0) | "\(.throughput_rps | floor) \(.client_cpu_ns / .requests | floor)"' "$out"
    }
    printf '%-11s %8s %10s %14s %14s %13s %16s\n' conn rate grpc-offer grpc-worker_ns rpclab-worker_ns rpclab/grpc 'req/s grpc,rpclab'
    for l in "${layout_list[@]}"; do
      for r in "${rate_list[@]}"; do
        # grpc-go's worker offers its offered_load from each of its
        # channel x outstanding goroutines (CONNS of them either way).
        per() { awk -v r="$1" -v c="$conns" 'BEGIN { printf "%.1f", r / c }'; }
        g=$(worker "$gw" "$l" "$(per "$r")") || g=
        gr=$(per "$(match "${g% *}" "$r" "$r" "$conns")")
        : >"$work/w.g" ; : >"$work/w.r" ; : >"$work/w.x" ; : >"$work/w.t"
        for _ in $(seq "$reps"); do
          g=$(worker "$gw" "$l" "$gr") || g=
          o=$(worker "$rw" "$l" "$r") || o=
          [ -n "$g" ] && echo "${g#* }" >>"$work/w.g"
          [ -n "$o" ] && echo "${o#* }" >>"$work/w.r"
          [ -n "$g" ] && [ -n "$o" ] && ratio "${o#* }" "${g#* }" >>"$work/w.x" && echo >>"$work/w.x"
          echo "${g% *},${o% *}" >>"$work/w.t"
        done
        printf '%-11s %8s %10s %14s %14s %13s %16s\n' "$l" "$r" "$gr" "$(range <"$work/w.g")" "$(range <"$work/w.r")" \
          "$(grep -v '^-\?$' "$work/w.x" | range)" "$(paste -sd' ' "$work/w.t")"
      done
    done
  fi
fi
