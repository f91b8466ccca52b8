// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

// sweep builds shared and pool:4 at in-flight 1, 16 and 32: at in-flight 1
// at their bases (req/s), above at the given efficiencies of their ideal
// lines, so pool:4 over shared is the same ratio at 16 and 32.
func sweep(sharedBase, poolBase, sharedEff, poolEff float64) []result.Record {
	var recs []result.Record
	for _, n := range []int{1, 16, 32} {
		es, ep := sharedEff, poolEff
		if n == 1 {
			es, ep = 1, 1
		}
		recs = append(recs, rec("shared", n, sharedBase*float64(n)*es), rec("pool:4", n, poolBase*float64(n)*ep))
	}
	return recs
}

// TestThresholdEdges moves each threshold of the bottleneck verdict to
// its edge and just past it, on records built here.
func TestThresholdEdges(t *testing.T) {
	const below = 0.01
	withBusy := func(recs []result.Record, share float64) []result.Record {
		for i := range recs {
			if recs[i].Spec.Inflight == 32 && recs[i].Spec.ConnMode == "pool" {
				recs[i] = busy(recs[i], share)
			}
		}
		return recs
	}
	// withServer gives shared and pool:4 at in-flight 32 the server's CPU
	// at those shares of its 2 CPUs (a negative share: none).
	withServer := func(recs []result.Record, shared, pool float64) []result.Record {
		for i := range recs {
			share := map[string]float64{"shared": shared, "pool": pool}[recs[i].Spec.ConnMode]
			if recs[i].Spec.Inflight == 32 && share >= 0 {
				d := recs[i].DurationNS
				recs[i].ServerCPU = &result.ServerCPU{CPUNS: int64(share * 2 * float64(d)), CPUs: 2, Busy: share,
					CPUNSPerRPC: share * 2 * float64(d) / float64(recs[i].Requests)}
			}
		}
		return recs
	}
	only := func(recs []result.Record, counts ...int) []result.Record {
		var out []result.Record
		for _, r := range recs {
			for _, n := range counts {
				if r.Spec.Inflight == n {
					out = append(out, r)
				}
			}
		}
		return out
	}
	// unconfirmed gives pool:4 only shared's throughput at in-flight 16,
	// so a ratio at 32 alone does not confirm itself.
	unconfirmed := func(recs []result.Record) []result.Record {
		var shared16 float64
		for _, r := range recs {
			if r.Spec.Inflight == 16 && r.Spec.ConnMode == "shared" {
				shared16 = r.ThroughputRPS
			}
		}
		for i := range recs {
			if recs[i].Spec.Inflight == 16 && recs[i].Spec.ConnMode == "pool" {
				recs[i].ThroughputRPS = shared16
			}
		}
		return recs
	}
	tests := []struct {
		name string
		recs []result.Record
		want Kind
		text string
	}{
		{"unconfirmed ratio, shared just below FlatEfficiency, pool at ScalingEfficiency", unconfirmed(sweep(1000, 1700, FlatEfficiency-below, ScalingEfficiency)), ConnBottleneck, "use 4 connections"},
		{"unconfirmed ratio, shared at FlatEfficiency, pool at ScalingEfficiency", unconfirmed(sweep(1000, 1700, FlatEfficiency, ScalingEfficiency)), Inconclusive, "one pair of steps is not enough"},
		{"unconfirmed ratio, shared flat, pool just below ScalingEfficiency", unconfirmed(sweep(1000, 1700, FlatEfficiency-below, ScalingEfficiency-below)), Inconclusive, "one pair of steps is not enough"},
		{"ratio at BottleneckRatio", sweep(1000, 1000, 0.6, 0.6*BottleneckRatio), ConnBottleneck, "Client-side connection bottleneck: use 4 connections"},
		{"ratio just below BottleneckRatio", sweep(1000, 1000, 0.6, 0.6*(BottleneckRatio-below)), Inconclusive, "more connections help a little"},
		{"shared just below FlatEfficiency, layouts together", sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), BoundElsewhere, "Every layout flattens together"},
		{"shared at FlatEfficiency, layouts together", sweep(1000, 1000, FlatEfficiency, FlatEfficiency), Inconclusive, "more connections help a little"},
		{"shared just below FlatEfficiency, pool at ScalingEfficiency", sweep(1000, 700, FlatEfficiency-below, ScalingEfficiency), ConnBottleneck, "Client-side connection bottleneck"},
		{"shared at FlatEfficiency, pool at ScalingEfficiency", sweep(1000, 700, FlatEfficiency, ScalingEfficiency), Inconclusive, "more connections help a little"},
		{"shared flat, pool just below ScalingEfficiency", sweep(1000, 700, FlatEfficiency-below, ScalingEfficiency-below), BoundElsewhere, "Every layout flattens together"},
		{"shared at ScalingEfficiency", sweep(1000, 1000, ScalingEfficiency, ScalingEfficiency), Scales, "no bottleneck at these counts"},
		{"shared just below ScalingEfficiency", sweep(1000, 1000, ScalingEfficiency-below, ScalingEfficiency-below), Inconclusive, "more connections help a little"},
		{"client at ClientCPUBusy", withBusy(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), ClientCPUBusy), ClientCPUBound, "pool:4 kept 90% of its 1 CPU busy"},
		{"client just below ClientCPUBusy", withBusy(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), ClientCPUBusy-below), BoundElsewhere, "Every layout flattens together"},
		{"server at ServerCPUBusy", withServer(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), -1, ServerCPUBusy), ServerBound, "the server kept 90% of its 2 CPUs busy under pool:4"},
		{"server just below ServerCPUBusy", withServer(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), -1, ServerCPUBusy-below), NotServer, "yet the server kept 89% of its 2 CPUs busy under pool:4"},
		{"server busy under shared, idle under pool", withServer(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), ServerCPUBusy, 0.1), ServerBound, "the server kept 90% of its 2 CPUs busy under shared"},
		{"server busy under pool, idle under shared", withServer(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), 0.1, ServerCPUBusy), ServerBound, "under pool:4"},
		{"server's CPU not recorded", sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), BoundElsewhere, "the server's CPU was not recorded"},
		{"server idle but the client full", withServer(withBusy(sweep(1000, 1000, FlatEfficiency-below, FlatEfficiency-below), ClientCPUBusy), 0.1, 0.1), ClientCPUBound, "pool:4 kept 90% of its 1 CPU busy"},
		{"one in-flight count, below MinInflights", only(sweep(1000, 1000, 0.5, 1), 32), Inconclusive, "Inconclusive: needs both layouts measured at 2 in-flight counts"},
		{"two in-flight counts, at MinInflights", only(sweep(1000, 1000, 0.5, 1), 16, 32), ConnBottleneck, "use 4 connections"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(tc.recs)
			if len(vs) != 1 {
				t.Fatalf("got %d verdicts, want 1", len(vs))
			}
			if vs[0].Kind != tc.want || !strings.Contains(vs[0].Text, tc.text) {
				t.Errorf("got %s: %q; want %s containing %q", vs[0].Kind, vs[0].Text, tc.want, tc.text)
			}
		})
	}
}

// TestEnoughOfBestEdge: the advice takes the fewest connections reaching
// EnoughOfBest of the best throughput, in the sweep verdict and in Advise.
func TestEnoughOfBestEdge(t *testing.T) {
	const best = 20000.0
	for _, tc := range []struct {
		name  string
		pool2 float64
		want  int
	}{
		{"pool:2 at EnoughOfBest", EnoughOfBest * best, 2},
		{"pool:2 just below EnoughOfBest", (EnoughOfBest - 0.01) * best, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []result.Record
			for _, n := range []int{16, 32} {
				recs = append(recs, rec("shared", n, 5000), rec("pool:2", n, tc.pool2), rec("pool:8", n, best))
			}
			vs := Verdicts(recs)
			if len(vs) != 1 || vs[0].Kind != ConnBottleneck || vs[0].Conns != tc.want {
				t.Fatalf("got %+v, want a connection bottleneck advising %d connections", vs, tc.want)
			}
			b, a := Advise([]*result.Record{&recs[4], &recs[5]})
			if b != &recs[5] || Conns(a) != tc.want {
				t.Errorf("Advise: got best %s, advised %d connections; want pool:8, %d", ConnLabel(b), Conns(a), tc.want)
			}
		})
	}
}

// TestAdviseTieBreak: between layouts of the same connection count within
// EnoughOfBest, the lower client CPU per RPC wins, whichever comes first.
func TestAdviseTieBreak(t *testing.T) {
	rr := cpuPerRPC(rec("pool:4", 32, 10000), 30e3)
	ll := cpuPerRPC(rec("pool:4", 32, 9500), 20e3)
	ll.Spec.Pick = "least-loaded"
	more := cpuPerRPC(rec("pool:8", 32, 10000), 10e3)
	for _, order := range [][]*result.Record{{&rr, &ll, &more}, {&more, &ll, &rr}} {
		if _, a := Advise(order); a != &ll {
			t.Errorf("got %s (%.0f ns/RPC), want pool:4:least-loaded, the cheaper of the two 4-connection layouts", ConnLabel(a), a.ClientCPUNSPerRPC)
		}
	}
	failed := rec("pool:2", 32, 0)
	failed.Status = result.StatusFailed
	if b, a := Advise([]*result.Record{&failed, nil}); b != nil || a != nil {
		t.Errorf("got %v, %v from no successful record, want nil, nil", b, a)
	}
}

// TestGrowthEdge: doubling the in-flight count must add at least 10% (the
// Growth the doc states) for throughput to count as still growing.
func TestGrowthEdge(t *testing.T) {
	for _, tc := range []struct {
		cur  float64
		want bool
	}{
		{1100, true},
		{1099, false},
	} {
		if got := Grew(1000, tc.cur); got != tc.want {
			t.Errorf("Grew(1000, %v) = %v, want %v", tc.cur, got, tc.want)
		}
	}
}

// TestSustainedShareEdge: an open-loop step sustained its rate when its
// throughput reached SustainedShare of it and the quantile met the bound.
func TestSustainedShareEdge(t *testing.T) {
	r := stats.NewRecorder()
	for range 100 {
		r.Record(500*time.Microsecond, codes.OK)
	}
	hdr, err := stats.EncodeHistogram(stats.Merge(r).Hist)
	if err != nil {
		t.Fatal(err)
	}
	slo := SLO{Name: "p99", Q: 99, Bound: time.Millisecond}
	tight := SLO{Name: "p99", Q: 99, Bound: 400 * time.Microsecond}
	for _, tc := range []struct {
		name string
		slo  SLO
		tput float64
		want bool
		why  string
	}{
		{"at SustainedShare", slo, SustainedShare * 1000, true, ""},
		{"just below SustainedShare", slo, (SustainedShare - 0.01) * 1000, false, "below 95% of the offered rate"},
		{"above the bound", tight, 1000, false, "p99 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := rec("shared", 1, tc.tput)
			rec.Spec.LoadModel, rec.Spec.RateRPS, rec.HistogramHDR = "open", 1000, hdr
			ok, why := tc.slo.Sustained(&rec)
			if ok != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want %v %q", ok, why, tc.want, tc.why)
			}
		})
	}
}

// TestGrowingEdge: a verdict short of a bottleneck whose best layout
// still grew by Growth from the next lower compared in-flight count, and
// pulled further ahead of shared there, is not settled (inconclusive,
// saying the climb ended while it grew); just below Growth the rules
// judge as before (every layout flattens together). Records of different
// methods are judged apart.
func TestGrowingEdge(t *testing.T) {
	build := func(growth float64) []result.Record {
		// Shared flat at 1000 req/s from in-flight 4; pool:4 at 1.2x
		// shared at 8 (below BottleneckRatio) after growth from 4.
		top := 1200.0
		return []result.Record{
			rec("shared", 1, 400), rec("pool:4", 1, 400),
			rec("shared", 4, 1000), rec("pool:4", 4, top/growth),
			rec("shared", 8, 1000), rec("pool:4", 8, top),
		}
	}
	for _, tc := range []struct {
		name   string
		growth float64
		want   Kind
	}{
		{"at Growth", Growth, Inconclusive},
		{"just below Growth", Growth - 0.01, BoundElsewhere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(build(tc.growth))
			if len(vs) != 1 || vs[0].Kind != tc.want {
				t.Fatalf("got %+v, want one %s verdict", vs, tc.want)
			}
			settled := !strings.Contains(vs[0].Text, "Not settled: pool:4 was still growing at in-flight 8")
			if settled != (tc.want != Inconclusive) {
				t.Errorf("got %q: want it to say whether the climb was still growing", vs[0].Text)
			}
		})
	}
	// The same records, half of them calling another method: two verdicts,
	// each naming its method.
	recs := append(build(Growth), build(Growth)...)
	for i := range recs[:6] {
		recs[i].Spec.Call = "kv.KV/Range"
	}
	vs := Verdicts(recs)
	if len(vs) != 2 || !strings.HasPrefix(vs[0].Text, "go unary kv.KV/Range, in-flight 8:") || !strings.HasPrefix(vs[1].Text, "go unary, in-flight 8:") {
		t.Errorf("got %d verdicts (%q), want one per method, each naming it", len(vs), Text(vs))
	}
}

// TestOtherWorkShareEdge: a step whose other work took just above
// OtherWorkShare of its CPU makes the verdict busy-host; at it, the rules
// judge as on a quiet machine.
func TestOtherWorkShareEdge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share float64
		want  Kind
	}{
		{"at OtherWorkShare", OtherWorkShare, BoundElsewhere},
		{"just above OtherWorkShare", OtherWorkShare + 0.01, BusyHost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := sweep(1000, 1000, FlatEfficiency-0.01, FlatEfficiency-0.01)
			recs[len(recs)-1] = other(recs[len(recs)-1], tc.share)
			vs := Verdicts(recs)
			if len(vs) != 1 || vs[0].Kind != tc.want {
				t.Fatalf("got %+v, want one %s verdict", vs, tc.want)
			}
		})
	}
}

// TestGuideStatesThresholds: the verdict's guide (docs/verdict.md) states
// each threshold's value; changing a constant without the guide fails
// here.
func TestGuideStatesThresholds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "verdict.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "*", "")), " ")
	for _, want := range []string{
		fmt.Sprintf("gets at least %gx shared's throughput", BottleneckRatio),
		fmt.Sprintf("connections that reach %g%% of the best", 100*EnoughOfBest),
		fmt.Sprintf("kept at least %g%% of its pinned CPUs busy", 100*ClientCPUBusy),
		fmt.Sprintf("server kept at least %g%% of its CPUs busy", 100*ServerCPUBusy),
		fmt.Sprintf("flattens together below %g%% of its ideal line", 100*FlatEfficiency),
		fmt.Sprintf("shared is still at %g%% of its ideal line or more", 100*ScalingEfficiency),
		fmt.Sprintf("is judged at %dx its in-flight-1 count", SharedOnlyInflight),
		fmt.Sprintf("more than %g%% below its peak", 100*Fall),
		fmt.Sprintf("other work took more than %g%% of the CPUs", 100*OtherWorkShare),
		fmt.Sprintf("an RPC in flight for %v or more when its interval ended", StallAge),
		fmt.Sprintf("grew by %gx or more", Growth),
		"gRFC A105 (`max_connections_per_subchannel`)",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("docs/verdict.md does not say %q", want)
		}
	}
}

// TestAdviseAdaptive: the adaptive pool is advised only when it at least
// matches the fixed layouts, on both sides of each edge: throughput at
// EnoughOfBest of the best fixed layout's, CPU per RPC at AutoCPUSlack of
// the advised fixed layout's.
func TestAdviseAdaptive(t *testing.T) {
	auto := func(rps, cpu float64) result.Record {
		r := cpuPerRPC(rec("shared", 32, rps), cpu)
		r.Spec.ConnMode, r.Spec.ConnsMin, r.Spec.ConnsRequested, r.ConnsObserved = AutoPoolMode, 1, 8, 3
		return r
	}
	shared := cpuPerRPC(rec("shared", 32, 5000), 10e3)
	pool2 := cpuPerRPC(rec("pool:2", 32, 9500), 10e3) // the advised fixed layout: fewest within 0.9
	pool8 := cpuPerRPC(rec("pool:8", 32, 10000), 14e3)
	for _, tc := range []struct {
		name      string
		auto      result.Record
		wantAdapt bool
	}{
		{"matches throughput and CPU", auto(EnoughOfBest*10000, 10e3), true},
		{"throughput just below EnoughOfBest", auto(EnoughOfBest*10000-1, 10e3), false},
		{"CPU at 1.1x (AutoCPUSlack)", auto(10000, 11e3), true},
		{"CPU just above 1.1x", auto(10000, 11e3+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.auto
			_, got := Advise([]*result.Record{&shared, &pool2, &a, &pool8})
			want := &pool2
			if tc.wantAdapt {
				want = &a
			}
			if got != want {
				t.Errorf("got %s, want %s", ConnLabel(got), ConnLabel(want))
			}
		})
	}
}

// TestVerdictAdvisesAdaptivePool: the sweep's verdict words the adaptive
// pool's advice as such, when Advise picks it.
func TestVerdictAdvisesAdaptivePool(t *testing.T) {
	var recs []result.Record
	for _, n := range []int{8, 16, 32} {
		auto := rec("shared", n, 2000*float64(n))
		auto.Spec.ConnMode, auto.Spec.ConnsMin, auto.Spec.ConnsRequested, auto.ConnsObserved = AutoPoolMode, 1, 8, 3
		recs = append(recs, rec("shared", n, 1000*float64(min(n, 8))), rec("pool:4", n, 2000*float64(n)), auto)
	}
	vs := Verdicts(recs)
	if len(vs) != 1 || vs[0].Kind != ConnBottleneck {
		t.Fatalf("got %+v, want one connection-bottleneck verdict", vs)
	}
	if want := "use the adaptive pool (pool:auto:1:8, which sized itself to 3 connections here, at least matching the best fixed layout; it reached 100% of pool:4; package pool"; !strings.Contains(vs[0].Text, want) {
		t.Errorf("got %q, want it to contain %q", vs[0].Text, want)
	}
}
