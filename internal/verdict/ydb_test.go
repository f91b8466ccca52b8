// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestYDBFixtures: issue 14's three runs get their labels and advice. The
// shared layout alone (a made-up curve, report/testdata's, that flattens
// at 37% of its ideal line) says shared only, with its gain at 10x
// in-flight (3.70x) and what that means;
// channel-per-worker with one connection seen is the trap, with its cause,
// fix and gRFC A105's limit; local-pool with its connections seen is a
// connection bottleneck at about 6x.
func TestYDBFixtures(t *testing.T) {
	for _, tc := range []struct {
		file     string
		kind     Kind
		inflight int
		text     []string
	}{
		{"shared-only.jsonl", SharedOnly, 10, []string{
			"cpp unary, shared only: at in-flight 10 (10x in-flight 1) one connection gave 3.70x the throughput of in-flight 1 (37000 vs 10000 req/s), 37% of its ideal line",
			"P50 grew 2.7x (100 to 270 µs)",
			"One connection stopped scaling: 10x the in-flight RPCs for 3.70x the throughput, so latency grows about linearly with in-flight",
			"add connections (--conn shared,per-worker,pool:4; in C++, Python and Node local-pool or distinct-args, not channel-per-worker) and measure again"}},
		{"channel-per-worker-trap.jsonl", Trap, 32, []string{
			"cpp unary, in-flight 32: the trap: channel-per-worker asked for 32 connections but the OS saw 1, so it measured 1 connection, not 32 (1.01x shared's throughput)",
			"identical arguments share one subchannel", "--conn local-pool or distinct-args",
			"gRFC A105, max_connections_per_subchannel", "only when one reaches the server's MAX_CONCURRENT_STREAMS", "far below that limit (here at 32 streams in flight)"}},
		{"local-pool-fixed.jsonl", ConnBottleneck, 32, []string{
			"cpp unary, in-flight 32: local-pool gave 6.00x the throughput of one shared connection (79200 vs 13200 req/s)",
			"Client-side connection bottleneck: use 32 connections (local-pool, each channel with distinct arguments or its own subchannel pool; rpclab::ChannelPool, clients/cpp/pool spreads RPCs over them)."}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			vs := Verdicts(fixture(t, tc.file))
			if len(vs) != 1 || vs[0].Kind != tc.kind || vs[0].Inflight != tc.inflight {
				t.Fatalf("got %+v, want one %s verdict at in-flight %d", vs, tc.kind, tc.inflight)
			}
			for _, part := range tc.text {
				if !strings.Contains(vs[0].Text, part) {
					t.Errorf("verdict %q lacks %q", vs[0].Text, part)
				}
			}
		})
	}
	if v := Verdicts(fixture(t, "shared-only.jsonl"))[0]; math.Abs(v.Gain-3.7) > 0.005 || math.Abs(v.SharedEfficiency-0.37) > 0.0005 {
		t.Errorf("shared only: got gain %.4f, efficiency %.4f; want 3.7 and 0.37", v.Gain, v.SharedEfficiency)
	}
	if v := Verdicts(fixture(t, "local-pool-fixed.jsonl"))[0]; math.Abs(v.Ratio-6) > 0.01 || v.Conns != 32 {
		t.Errorf("fixed: got ratio %.2f advising %d connections; want 6.00 and 32", v.Ratio, v.Conns)
	}
}

// TestTrapWithoutShared: YDB's original client alone (channel-per-worker,
// no shared layout beside it) is still the trap, at its top in-flight
// count, with no ratio to shared.
func TestTrapWithoutShared(t *testing.T) {
	var recs []result.Record
	for _, r := range fixture(t, "channel-per-worker-trap.jsonl") {
		if r.Spec.ConnMode == "channel-per-worker" {
			recs = append(recs, r)
		}
	}
	vs := Verdicts(recs)
	if len(vs) != 1 || vs[0].Kind != Trap || vs[0].Inflight != 32 || vs[0].Ratio != 0 {
		t.Fatalf("got %+v, want one trap at in-flight 32 without a ratio", vs)
	}
	if want := "asked for 32 connections but the OS saw 1, so it measured 1 connection, not 32: channels with identical arguments"; !strings.Contains(vs[0].Text, want) {
		t.Errorf("verdict %q lacks %q", vs[0].Text, want)
	}
}

// sharedRun is the shared layout alone at in-flight 1, 10 and 20, with
// throughput rps(1) = 1000 and efficiency eff10 at 10 and eff20 at 20.
func sharedRun(eff10, eff20 float64, counts ...int) []result.Record {
	if len(counts) == 0 {
		counts = []int{1, 10, 20}
	}
	effs := map[int]float64{1: 1, 10: eff10, 20: eff20, 5: eff10}
	var recs []result.Record
	for _, n := range counts {
		recs = append(recs, rec("shared", n, 1000*float64(n)*effs[n]))
	}
	return recs
}

// TestSharedOnlyThresholds: a shared-only run is judged at
// SharedOnlyInflight when it has it (else at its highest count), against
// FlatEfficiency and ScalingEfficiency, each on both sides of its edge.
func TestSharedOnlyThresholds(t *testing.T) {
	const below = 0.01
	for _, tc := range []struct {
		name     string
		recs     []result.Record
		inflight int
		text     string
	}{
		{"at SharedOnlyInflight, judged there", sharedRun(0.3, 0.9), SharedOnlyInflight, "One connection stopped scaling"},
		{"without SharedOnlyInflight, judged at the top", sharedRun(0.9, 0.3, 1, 5, 20), 20, "One connection stopped scaling"},
		{"without SharedOnlyInflight, below it", sharedRun(0.3, 0.9, 1, 5), 5, "One connection stopped scaling"},
		{"just below FlatEfficiency", sharedRun(FlatEfficiency-below, 0), 10, "One connection stopped scaling"},
		{"at FlatEfficiency", sharedRun(FlatEfficiency, 0), 10, "One connection scales only part of the way: add connections"},
		{"just below ScalingEfficiency", sharedRun(ScalingEfficiency-below, 0), 10, "One connection scales only part of the way"},
		{"at ScalingEfficiency", sharedRun(ScalingEfficiency, 0), 10, "One connection still scales at these counts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(tc.recs)
			if len(vs) != 1 || vs[0].Kind != SharedOnly || vs[0].Inflight != tc.inflight {
				t.Fatalf("got %+v, want one %s verdict at in-flight %d", vs, SharedOnly, tc.inflight)
			}
			if !strings.Contains(vs[0].Text, tc.text) {
				t.Errorf("got %q, want it to contain %q", vs[0].Text, tc.text)
			}
		})
	}
}

// TestSharedOnlyNeeds: no verdict without an in-flight-1 step or a second
// in-flight count, and none for a shared-only group once another layout
// is beside it.
func TestSharedOnlyNeeds(t *testing.T) {
	if vs := Verdicts(sharedRun(0.3, 0.3, 10, 20)); len(vs) != 0 {
		t.Errorf("no in-flight 1: got %+v, want no verdict", vs)
	}
	if vs := Verdicts(sharedRun(0.3, 0.3, 1)); len(vs) != 0 {
		t.Errorf("in-flight 1 only: got %+v, want no verdict", vs)
	}
	recs := append(sharedRun(0.3, 0.3), rec("per-worker", 10, 3000), rec("per-worker", 20, 6000))
	if vs := Verdicts(recs); len(vs) != 1 || vs[0].Kind == SharedOnly {
		t.Errorf("with per-worker beside shared: got %+v, want the comparison's verdict", vs)
	}
	// A second one-connection layout (pool:1) is not the shared layout
	// alone, and gives nothing to compare either.
	recs = append(sharedRun(0.3, 0.3), rec("pool:1", 10, 3000), rec("pool:1", 20, 6000))
	if vs := Verdicts(recs); len(vs) != 0 {
		t.Errorf("with pool:1 beside shared: got %+v, want no verdict", vs)
	}
}

// TestServicesJudgedApart: the same sweep against BenchmarkService and
// YDB's DebugService (spec.service ydb-debug) in one file is two groups,
// two verdicts, each on its own ideal line; benchmark named and benchmark
// absent are one.
func TestServicesJudgedApart(t *testing.T) {
	bench := sweep(1000, 1000, 0.3, 0.3)
	for i := range bench {
		if i%2 == 0 {
			bench[i].Spec.Service = "benchmark" // the default, named or not
		}
	}
	ydb := sweep(300, 300, 1, 1) // its in-flight-1 step must not set bench's ideal line
	for i := range ydb {
		ydb[i].Spec.Service = "ydb-debug"
	}
	vs := Verdicts(append(bench, ydb...))
	if len(vs) != 2 || vs[0].Kind != BoundElsewhere || vs[1].Kind != Scales {
		t.Fatalf("got %+v, want bound-elsewhere (benchmark) then scales (ydb-debug)", vs)
	}
}

// TestSharedOnlyServerCPU: a shared-only run that carries the server's CPU
// at its judged in-flight count says whether the server was busy (at
// ServerCPUBusy) or idle (just below: YDB's "the server was idle"), and
// the kind stays shared only; without it the text says nothing of the
// server.
func TestSharedOnlyServerCPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		busy float64
		want string
	}{
		{"server at ServerCPUBusy", ServerCPUBusy, "At in-flight 10 the server kept 90% of its 4 CPUs busy: it may well be the limit itself."},
		{"server just below ServerCPUBusy", ServerCPUBusy - 0.01, "At in-flight 10 the server kept only 89% of its 4 CPUs busy, so its CPU is not the limit"},
		{"no server CPU", -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := fixture(t, "shared-only.jsonl")
			for i := range recs {
				if recs[i].Spec.Inflight == 10 && tc.busy >= 0 {
					recs[i].ServerCPU = &result.ServerCPU{CPUNS: 1, CPUs: 4, Busy: tc.busy, CPUNSPerRPC: 1}
				}
			}
			vs := Verdicts(recs)
			if len(vs) != 1 || vs[0].Kind != SharedOnly {
				t.Fatalf("got %+v, want one shared-only verdict", vs)
			}
			if tc.want == "" {
				if strings.Contains(vs[0].Text, "the server kept") {
					t.Errorf("verdict %q speaks of the server's CPU, which no record has", vs[0].Text)
				}
				return
			}
			if !strings.Contains(vs[0].Text, tc.want) {
				t.Errorf("verdict %q lacks %q", vs[0].Text, tc.want)
			}
		})
	}
}
