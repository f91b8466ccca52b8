// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build ignore

// gen_fixtures writes the report package's fixture records: synthetic runs
// shaped like real sweeps (latency from Little's law, P99 and P99.9 as
// multiples of P50), one per verdict kind but inconclusive, plus the bad inputs. Run it from this
// directory: go run gen_fixtures.go
package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

var inflight = []int{1, 2, 4, 8, 16, 32}

type layout struct {
	mode  string
	conns func(n int) int
	rps   []float64
	cpuUS float64
}

func rec(target, server string, l layout, counts []int, i int, t0 time.Time) result.Record {
	n := counts[i]
	rps := l.rps[i]
	p50 := int64(float64(n) / rps * 1e9)
	interval := 3 * time.Second
	reqs := int64(rps * interval.Seconds())
	r := result.Record{
		SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
		StartedAt: t0.Add(time.Duration(i) * 4 * time.Second).UTC(),
		Spec: result.Spec{Target: target, RPC: "unary", ConnMode: l.mode, ConnsRequested: l.conns(n),
			Inflight: n, WarmupNS: int64(time.Second), IntervalNS: int64(interval), LoadModel: "closed", Server: server},
		Env: result.Env{Language: "go", GRPCImpl: "grpc-go", GRPCVersion: "1.85.0", RuntimeVersion: "go1.26.8",
			HostCPUs: 2, ClientCPUs: []int{0}, Hostname: "fixture", OS: "linux/amd64"},
		Requests: reqs, Errors: map[string]int64{}, DurationNS: int64(interval), ThroughputRPS: rps,
		Latency: stats.Latency{MinNS: p50 / 3, MeanNS: float64(p50) * 1.2, P50NS: p50, P90NS: p50 * 2,
			P99NS: p50 * 5 / 2, P999NS: p50 * 5, P100NS: p50 * 9},
		ConnsObserved: l.conns(n), ClientCPUNS: int64(l.cpuUS * 1e3 * float64(reqs)), ClientCPUNSPerRPC: l.cpuUS * 1e3,
	}
	if l.mode == "pool" {
		r.Spec.Pick = "round-robin"
	}
	return r
}

// openRun is an open-loop sweep (rpclab sweep --rps) of shared and
// per-worker at four offered rates: throughput follows the rate until shared
// falls behind at the top one, where its latency and schedule lag grow.
func openRun(target string) []result.Record {
	rates := []float64{2000, 5000, 10000, 20000}
	t0 := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	var out []result.Record
	for _, l := range []struct {
		mode  string
		conns int
		tput  []float64
		p99US []float64
		lagUS []float64
	}{
		{"shared", 1, []float64{2000, 5000, 10000, 16000}, []float64{400, 600, 1500, 25000}, []float64{300, 250, 400, 9000}},
		{"per-worker", 8, []float64{2000, 5000, 10000, 20000}, []float64{380, 520, 900, 2400}, []float64{300, 240, 300, 700}},
	} {
		for i, rate := range rates {
			interval := 3 * time.Second
			reqs := int64(l.tput[i] * interval.Seconds())
			sent := int64(rate * interval.Seconds())
			p99 := int64(l.p99US[i] * 1e3)
			lag := int64(l.lagUS[i] * 1e3)
			hits, peak := int64(0), int64(8+i*20)
			out = append(out, result.Record{
				SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
				StartedAt: t0.UTC(),
				Spec: result.Spec{Target: target, RPC: "unary", ConnMode: l.mode, ConnsRequested: l.conns,
					Inflight: 8, WarmupNS: int64(time.Second), IntervalNS: int64(interval), LoadModel: "open", Server: "go",
					RateRPS: rate, Arrival: "constant", MaxOutstanding: 2000},
				Env: result.Env{Language: "go", GRPCImpl: "grpc-go", GRPCVersion: "1.85.0", RuntimeVersion: "go1.26.8",
					HostCPUs: 2, ClientCPUs: []int{0}, Hostname: "fixture", OS: "linux/amd64"},
				Requests: reqs, Errors: map[string]int64{}, DurationNS: int64(interval), ThroughputRPS: l.tput[i],
				Latency: stats.Latency{MinNS: p99 / 10, MeanNS: float64(p99) / 3, P50NS: p99 / 4, P90NS: p99 / 2,
					P99NS: p99, P999NS: p99 * 2, P100NS: p99 * 3},
				ConnsObserved: l.conns, ClientCPUNS: 20000 * reqs, ClientCPUNSPerRPC: 20000,
				Sent: &sent, ScheduleLag: &stats.Latency{MinNS: 1000, MeanNS: float64(lag) / 2, P50NS: lag / 2, P90NS: lag * 3 / 4,
					P99NS: lag, P999NS: lag * 2, P100NS: lag * 3},
				MaxOutstandingHits: &hits, PeakOutstanding: &peak,
			})
			t0 = t0.Add(5 * time.Second)
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen_fixtures:", err)
	os.Exit(1)
}

func one(int) int    { return 1 }
func same(n int) int { return n }
func four(int) int   { return 4 }

func write(name string, recs []result.Record) []byte {
	var b bytes.Buffer
	w := result.NewWriter(&b)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			fail(err)
		}
	}
	if name != "" {
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			fail(err)
		}
	}
	return b.Bytes()
}

func run(target, server string, ls ...layout) []result.Record {
	return runAt(inflight, target, server, ls...)
}

// runAt is run at the in-flight counts given.
func runAt(counts []int, target, server string, ls ...layout) []result.Record {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var out []result.Record
	for _, l := range ls {
		for i := range counts {
			out = append(out, rec(target, server, l, counts, i, t0))
			t0 = t0.Add(time.Minute)
		}
	}
	return out
}

// cpp makes recs the C++ client's (the C-core stack, where channels with
// identical arguments share one connection), its OS-observed connection
// count set by observed for the layout named.
func cpp(recs []result.Record, layout string, observed func(n int) int) []result.Record {
	for i := range recs {
		r := &recs[i]
		r.Env.Language, r.Env.GRPCImpl, r.Env.GRPCVersion = "cpp", "grpc-c++", "1.51.1"
		r.Env.RuntimeVersion = "GCC 14.2.0, C++17 (sync API)"
		if r.Spec.ConnMode == layout {
			r.ConnsObserved = observed(r.Spec.Inflight)
		}
	}
	return recs
}

// sharedOnlyRPS is a single-connection curve from in-flight 1 to 21 that
// flattens as YDB's post describes its single-connection table: 10x the
// in-flight RPCs give 3.7x the throughput (rps(n) = rps(1)*n/(1+(n-1)*a),
// a = (10/3.7-1)/9). The absolute numbers are rpclab's, not YDB's.
func sharedOnlyRPS() ([]int, []float64) {
	const base = 10000.0
	a := (10/3.7 - 1) / 9
	var counts []int
	var rps []float64
	for n := 1; n <= 21; n++ {
		counts = append(counts, n)
		rps = append(rps, math.Round(base*float64(n)/(1+float64(n-1)*a)))
	}
	return counts, rps
}

// busyHost gives recs a server pinned to CPU 1 that kept half of it busy,
// and the host's CPU with other work taking client of the client's CPU 0
// and server of CPU 1 from in-flight from on (2% of each below it).
func busyHost(recs []result.Record, from int, client, server float64) []result.Record {
	for i := range recs {
		r := &recs[i]
		d := r.DurationNS
		r.ServerCPU = &result.ServerCPU{CPUNS: d / 2, CPUNSPerRPC: float64(d/2) / float64(r.Requests), CPUs: 1, Busy: 0.5}
		oc, os := 0.02, 0.02
		if r.Spec.Inflight >= from {
			oc, os = client, server
		}
		cb := min(r.ClientCPUNS+int64(oc*float64(d)), d)
		sb := min(d/2+int64(os*float64(d)), d)
		r.HostCPU = &result.HostCPU{
			Client: result.CPUTimes{CPUs: []int{0}, BusyNS: cb, IdleNS: d - cb},
			Server: &result.CPUTimes{CPUs: []int{1}, BusyNS: sb, IdleNS: d - sb},
			Host:   result.CPUTimes{CPUs: []int{0, 1}, BusyNS: cb + sb, IdleNS: 2*d - cb - sb},
		}
	}
	return recs
}

func main() {
	own := "127.0.0.1:40001"
	write("shared-bottleneck.jsonl", run(own, "go",
		layout{"shared", one, []float64{5000, 9000, 14000, 16000, 16500, 16800}, 24},
		layout{"per-worker", same, []float64{5000, 9900, 19500, 38000, 74000, 132000}, 19},
		layout{"pool", four, []float64{5000, 9800, 19300, 37000, 70000, 125000}, 18}))
	write("server-bound.jsonl", run(own, "go",
		layout{"shared", one, []float64{5000, 9000, 12000, 12500, 12600, 12600}, 22},
		layout{"per-worker", same, []float64{5000, 9100, 12200, 12600, 12700, 12650}, 23}))
	// Every layout flat, and the client's one CPU full: 12600 req/s at
	// 75 µs per RPC is 0.95 of a core.
	write("client-cpu-bound.jsonl", run(own, "go",
		layout{"shared", one, []float64{5000, 9000, 12000, 12500, 12600, 12600}, 75},
		layout{"per-worker", same, []float64{5000, 8800, 11500, 11800, 11900, 11850}, 80}))
	// Issue 30's run: every layout flat and the server half idle, because
	// other processes took 41% of the client's CPU 0 and 38% of the
	// server's CPU 1 at in-flight 16 and 32 (2% below that): busy-host,
	// not not-the-server.
	write("busy-host.jsonl", busyHost(run(own, "go",
		layout{"shared", one, []float64{5000, 9000, 12000, 12500, 12600, 12600}, 45},
		layout{"per-worker", same, []float64{5000, 9100, 12200, 12600, 12700, 12650}, 46}), 16, 0.41, 0.38))
	healthy := write("healthy.jsonl", run("127.0.0.1:40002", "go",
		layout{"shared", one, []float64{5000, 9900, 19600, 38800, 76000, 148000}, 15},
		layout{"per-worker", same, []float64{5000, 9900, 19700, 39000, 76500, 150000}, 16}))

	write("open-loop.jsonl", openRun(own))

	// Issue 14's three C++ runs. shared-only: the shared layout alone, in
	// the shape of YDB's single-connection table (in-flight 1..21, 3.7x the
	// throughput at 10x the in-flight; source: E. Ivanov, "The Surprising
	// gRPC Client Bottleneck in Low-Latency Networks", blog.ydb.tech, 2025).
	counts, rps := sharedOnlyRPS()
	write("shared-only.jsonl", cpp(runAt(counts, own, "cpp", layout{"shared", one, rps, 30}), "shared", one))
	// channel-per-worker-trap: YDB's original client, a channel per worker
	// with identical arguments: the OS sees one connection at every worker
	// count, and the curve is shared's.
	flat := []float64{5000, 8000, 11000, 12500, 13000, 13200}
	write("channel-per-worker-trap.jsonl", cpp(run(own, "cpp",
		layout{"shared", one, flat, 30},
		layout{"channel-per-worker", same, []float64{5000, 8100, 11200, 12600, 13100, 13300}, 31}), "channel-per-worker", one))
	// local-pool-fixed: the fix, each channel on its own subchannel pool and
	// connection (seen by the OS), about 6x shared at in-flight 32.
	write("local-pool-fixed.jsonl", cpp(run(own, "cpp",
		layout{"shared", one, flat, 30},
		layout{"local-pool", same, []float64{5000, 9800, 19000, 36000, 62000, 79200}, 26}), "local-pool", same))

	if err := os.WriteFile("empty.jsonl", nil, 0o644); err != nil {
		fail(err)
	}
	lines := strings.SplitAfter(string(healthy), "\n")
	trunc := strings.Join(lines[:3], "") + lines[3][:len(lines[3])/2]
	if err := os.WriteFile("truncated.jsonl", []byte(trunc), 0o644); err != nil {
		fail(err)
	}
	bad := strings.Replace(lines[0], `"schema_version":1`, `"schema_version":99`, 1)
	if err := os.WriteFile("unknown-version.jsonl", []byte(lines[1]+bad), 0o644); err != nil {
		fail(err)
	}
	mixed := append(run("10.0.0.5:50051", "", layout{"shared", one, []float64{5000, 9000, 14000, 16000, 16500, 16800}, 24})[:3],
		run("10.0.0.6:50051", "", layout{"shared", one, []float64{4000, 8000, 15000, 28000, 50000, 90000}, 24})[:3]...)
	write("mixed-targets.jsonl", mixed)
}
