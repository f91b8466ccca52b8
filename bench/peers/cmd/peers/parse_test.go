// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/bench/peers/internal/cli"
)

func TestParseGRPCClient(t *testing.T) {
	out := "qps: 1234.5\nLatency: (50/90/99 %ile): 156µs/300µs/832.3µs\nClient CPU utilization: 1s\n"
	var r lgRow
	if err := parseGRPCClient(out, 2, &r); err != nil {
		t.Fatalf("parseGRPCClient: %v", err)
	}
	if got, want := r.requests, int64(2469); got != want {
		t.Errorf("requests: got %d, want %d", got, want)
	}
	if got, want := r.p50, 156*time.Microsecond; got != want {
		t.Errorf("p50: got %v, want %v", got, want)
	}
	if got, want := r.p99, 832300*time.Nanosecond; got != want {
		t.Errorf("p99: got %v, want %v", got, want)
	}
	if err := parseGRPCClient("nothing\n", 1, &lgRow{}); err == nil {
		t.Error("parseGRPCClient(no qps): got nil error, want one")
	}
}

func TestParseH2load(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    int64
		wantErr bool
	}{
		{"ok", "finished in 1.00s, 3468.00 req/s, 120KB/s\nrequests: 3468 total, 3468 started, 3468 done, 3468 succeeded, 0 failed, 0 errored, 0 timeout\n", 3468, false},
		{"failures", "finished in 1.00s, 10.00 req/s, 1KB/s\nrequests: 12 total, 12 started, 12 done, 10 succeeded, 2 failed, 0 errored, 0 timeout\n", 0, true},
		{"empty", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r lgRow
			err := parseH2load(tc.out, &r)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseH2load: got error %v, want error %v", err, tc.wantErr)
			}
			if got := r.requests; got != tc.want {
				t.Errorf("requests: got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestParseGHZ(t *testing.T) {
	tests := []struct {
		name     string
		json     string
		want     int64
		wantErr  bool
		wantNote bool
	}{
		{"ok", `{"count":100,"rps":50.5,"latencyDistribution":[{"percentage":50,"latency":1000},{"percentage":99,"latency":9000}]}`, 100, false, false},
		{"cut at stop", `{"count":100,"rps":50,"errorDistribution":{"rpc error: code = Unavailable desc = transport is closing":3}}`, 100, false, true},
		{"real errors", `{"count":100,"rps":50,"errorDistribution":{"rpc error: code = Internal desc = boom":3}}`, 0, true, false},
		{"none", `{"count":0}`, 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r lgRow
			err := parseGHZ([]byte(tc.json), &r)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseGHZ: got error %v, want error %v", err, tc.wantErr)
			}
			if got := r.requests; got != tc.want {
				t.Errorf("requests: got %d, want %d", got, tc.want)
			}
			if got := r.note != ""; got != tc.wantNote {
				t.Errorf("note %q: got present %v, want %v", r.note, got, tc.wantNote)
			}
		})
	}
}

func TestParseCallgrind(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cg")
	if err := os.WriteFile(p, []byte("version: 1\ncmd: x\nevents: Ir\nsummary: 123456\nfl=a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := parseCallgrind(p)
	if err != nil || got != 123456 {
		t.Errorf("parseCallgrind: got %d, %v, want 123456, nil", got, err)
	}
}

func TestPoolTable(t *testing.T) {
	in := strings.Join([]string{
		"BenchmarkPools/conns=2/parallel=8/peer=rpclab-pool-2   100  1000 ns/op  8.00 goroutines  1000 rpc/s  500 B/op  10 allocs/op",
		"BenchmarkPools/conns=2/parallel=8/peer=google-api-pool-2   100  500 ns/op  8.00 goroutines  2000 rpc/s  500 B/op  20 allocs/op",
		"BenchmarkPools/conns=2/parallel=8/peer=per-goroutine-2   100  500 ns/op  8.00 goroutines  500 rpc/s  500 B/op  10 allocs/op",
	}, "\n")
	var out strings.Builder
	if err := runPoolTable(strings.NewReader(in), &out); err != nil {
		t.Fatalf("runPoolTable: %v", err)
	}
	lines := strings.Split(out.String(), "\n")
	tests := []struct{ peer, want string }{
		{"rpclab-pool", "1.00 1.00"},
		{"google-api-pool", "0.50 0.50"},
		{"per-goroutine", "2.00 1.00"},
	}
	for _, tc := range tests {
		found := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 3 && f[3] == tc.peer {
				found = true
				if got := strings.Join(f[len(f)-2:], " "); got != tc.want {
					t.Errorf("%s ratios: got %q, want %q", tc.peer, got, tc.want)
				}
				if tc.peer == "per-goroutine" && f[1] != "8" {
					t.Errorf("per-goroutine conns: got %s, want 8 (one per goroutine)", f[1])
				}
			}
		}
		if !found {
			t.Errorf("no row for %s in:\n%s", tc.peer, out.String())
		}
	}
	if err := runPoolTable(strings.NewReader("PASS\n"), &out); err == nil {
		t.Error("runPoolTable(no benchmark): got nil error, want one")
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{{"0", 1, false}, {"0-2,5", 4, false}, {"2-1", 0, true}, {"x", 0, true}}
	for _, tc := range tests {
		got, err := cli.ParseCPUList(tc.in)
		if (err != nil) != tc.wantErr || len(got) != tc.want {
			t.Errorf("cli.ParseCPUList(%q): got %v, %v, want %d CPUs, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := [][]string{
		{},
		{"nope"},
		{"loadgen", "--rpclab", "/nonexistent"},
		{"loadgen", "--rpclab", os.Args[0], "--inflight", "0"},
		{"loadgen", "--rpclab", os.Args[0], "--layouts", "pool"},
		{"loadgen", "--rpclab", os.Args[0], "--repeats", "0"},
		{"netem", "--delays", "soon"},
	}
	for _, args := range tests {
		var o, e strings.Builder
		if got := run(args, strings.NewReader(""), &o, &e); got != 2 {
			t.Errorf("run(%q): got exit %d, want 2 (stderr %q)", args, got, e.String())
		}
	}
}

func TestPrintLGRowsRatios(t *testing.T) {
	rows := []lgRow{
		{tool: "rpclab", requests: 1000, rps: 100, cpu: 10 * time.Millisecond},
		{tool: "ghz", requests: 1000, rps: 50, cpu: 20 * time.Millisecond},
		{tool: "h2load", err: "not installed"},
	}
	var out strings.Builder
	printLGRows(&out, false, "shared", 8, rows)
	lines := strings.Split(out.String(), "\n")
	tests := []struct{ tool, want string }{
		{"rpclab", "1.00 1.00-1.00 1.00"},
		{"ghz", "0.50 0.50-0.50 2.00"}, // rpclab spends half the CPU per RPC and serves twice the rate
	}
	for _, tc := range tests {
		found := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 2 && f[2] == tc.tool {
				found = true
				if got := strings.Join(f[len(f)-3:], " "); got != tc.want {
					t.Errorf("%s ratios: got %q, want %q (line %q)", tc.tool, got, tc.want, l)
				}
			}
		}
		if !found {
			t.Errorf("no row for %s in:\n%s", tc.tool, out.String())
		}
	}
	if !strings.Contains(out.String(), "FAILED: not installed") {
		t.Errorf("the failed tool's row is missing:\n%s", out.String())
	}
}

func TestPrintNERowsRatios(t *testing.T) {
	rows := []neRow{
		{proxy: "rpclab-netem", delay: time.Millisecond, samples: 10, errP50: 10 * time.Microsecond, errP99: 40 * time.Microsecond,
			bytes: 1 << 30, bulkWall: time.Second, proxyCPU: time.Second},
		{proxy: "toxiproxy", delay: time.Millisecond, samples: 10, errP50: -40 * time.Microsecond, errP99: 80 * time.Microsecond,
			bytes: 1 << 30, bulkWall: time.Second, proxyCPU: 4 * time.Second},
	}
	var out strings.Builder
	printNERows(&out, rows)
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[1] == "toxiproxy" {
			if got, want := strings.Join(f[len(f)-3:], " "), "0.25 0.50 0.25"; got != want {
				t.Errorf("toxiproxy ratios: got %q, want %q", got, want)
			}
			return
		}
	}
	t.Errorf("no toxiproxy row in:\n%s", out.String())
}

// rep is one repeat's run of a tool: n requests in cpuMS of CPU.
func rep(tool string, n int64, cpuMS int) lgRow {
	return lgRow{tool: tool, requests: n, rps: float64(n) / 5, cpu: time.Duration(cpuMS) * time.Millisecond}
}

func TestPrintLGRowsRepeats(t *testing.T) {
	// Three repeats: rpclab at 10, 12, 11 µs/RPC, grpc-client at 10, 10,
	// 12: medians 11 and 10, per-repeat ratios 1.00, 1.20, 0.92. h2load's
	// second repeat failed; ghz failed in every repeat.
	rows := []lgRow{
		summarize("rpclab", []lgRow{rep("rpclab", 1000, 10), rep("rpclab", 1000, 12), rep("rpclab", 2000, 22)}),
		summarize("grpc-client", []lgRow{rep("grpc-client", 1000, 10), rep("grpc-client", 3000, 30), rep("grpc-client", 1000, 12)}),
		summarize("h2load", []lgRow{rep("h2load", 1000, 5), {tool: "h2load", err: "boom"}, rep("h2load", 1000, 3)}),
		summarize("ghz", []lgRow{{tool: "ghz", err: "no"}, {tool: "ghz", err: "no"}}),
	}
	var out strings.Builder
	printLGRows(&out, false, "shared", 8, rows)
	tests := []struct {
		tool string
		want []string // requests, cpu µs/rpc, rpclab/x cpu, cpu range, rpclab/x req/s
	}{
		{"rpclab", []string{"1000", "11.0", "1.00", "1.00-1.00", "1.00"}},
		{"grpc-client", []string{"1000", "10.0", "1.10", "0.92-1.20", "1.00"}},
		// Medians over the two repeats that ran (4 µs/RPC), ratios of
		// those repeats only (10/5 and 11/3).
		{"h2load", []string{"1000", "4.0", "2.75", "2.00-3.67", "1.00"}},
	}
	for _, tc := range tests {
		var f []string
		for _, l := range strings.Split(out.String(), "\n") {
			if g := strings.Split(l, "\t"); len(g) > 12 && g[2] == tc.tool {
				f = g
			}
		}
		if f == nil {
			t.Errorf("no row for %s in:\n%s", tc.tool, out.String())
			continue
		}
		got := []string{f[3], f[5], f[9], f[10], f[11]}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %q, want %q (line %q)", tc.tool, got, tc.want, f)
		}
	}
	if !strings.Contains(out.String(), "1 of 3 repeats failed (repeat 2: boom)") {
		t.Errorf("h2load's failed repeat is not noted:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "FAILED: every one of 2 repeats failed") {
		t.Errorf("ghz's row is not failed:\n%s", out.String())
	}
}

func TestRotated(t *testing.T) {
	tools := []string{"a", "b", "c"}
	tests := []struct {
		rep  int
		want string
	}{
		{0, "a b c"},
		{1, "b c a"},
		{2, "c a b"},
		{3, "a b c"},
	}
	for _, tc := range tests {
		if got := strings.Join(cli.Rotated(tools, tc.rep), " "); got != tc.want {
			t.Errorf("cli.Rotated(%v, %d): got %q, want %q", tools, tc.rep, got, tc.want)
		}
	}
}
