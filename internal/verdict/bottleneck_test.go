// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// fixture reads one of report's sweep fixtures (report/testdata, written by
// report/testdata/gen_fixtures.go), which the report's HTML tests share.
func fixture(t *testing.T, name string) []result.Record {
	t.Helper()
	recs, err := result.ReadFile(filepath.Join("..", "report", "testdata", name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return recs
}

func TestVerdictFixtures(t *testing.T) {
	tests := []struct {
		file      string
		kind      Kind
		inflight  int
		best      string
		conns     int
		textParts []string
	}{
		{"shared-bottleneck.jsonl", ConnBottleneck, 32, "per-worker", 4,
			[]string{"per-worker gave 7.86x", "shared reached 10% of its ideal line, per-worker 82%", "Client-side connection bottleneck: use 4 connections (pool:4 reached 95% of per-worker"}},
		{"server-bound.jsonl", BoundElsewhere, 32, "per-worker", 32,
			[]string{"1.00x", "Every layout flattens together"}},
		{"client-cpu-bound.jsonl", ClientCPUBound, 32, "per-worker", 32,
			[]string{"0.94x", "The client's own CPU is the limit: per-worker kept 95% of its 1 CPU busy at 80.0 µs per RPC (shared 75.0 µs)"}},
		{"busy-host.jsonl", BusyHost, 32, "per-worker", 32,
			[]string{"Other processes took 41% of CPU 0 (the client's) and 38% of CPU 1 (the server's) during the steps at in-flight 16-32", "As measured: go unary, in-flight 32: per-worker gave 1.00x"}},
		{"healthy.jsonl", Scales, 32, "per-worker", 32,
			[]string{"shared reached 92% of its ideal line", "no bottleneck at these counts"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			vs := Verdicts(fixture(t, tc.file))
			if len(vs) != 1 {
				t.Fatalf("got %d verdicts, want 1: %+v", len(vs), vs)
			}
			v := vs[0]
			if v.Kind != tc.kind || v.Inflight != tc.inflight || v.Best != tc.best || v.Conns != tc.conns {
				t.Errorf("got kind %q at in-flight %d, best %q, conns %d; want %q, %d, %q, %d",
					v.Kind, v.Inflight, v.Best, v.Conns, tc.kind, tc.inflight, tc.best, tc.conns)
			}
			for _, part := range tc.textParts {
				if !strings.Contains(v.Text, part) {
					t.Errorf("verdict text %q does not contain %q", v.Text, part)
				}
			}
		})
	}
}

// TestVerdictThresholds moves shared's throughput at the compared in-flight
// count across each documented threshold.
func TestVerdictThresholds(t *testing.T) {
	base := fixture(t, "server-bound.jsonl")
	tests := []struct {
		name       string
		shared, pw float64 // throughput at in-flight 32; in-flight 1 is 5000 req/s
		want       Kind
		text       string
		// confirm gives per-worker the same ratio over shared at in-flight 16.
		confirm bool
		// busy is the share of its one CPU the per-worker client kept busy
		// at in-flight 32 (0: the fixture's, under a third).
		busy float64
	}{
		{"ratio at BottleneckRatio", 10000, 10000 * BottleneckRatio, ConnBottleneck, "use 32 connections", true, 0},
		{"ratio at BottleneckRatio at in-flight 32 only", 10000, 10000 * BottleneckRatio, Inconclusive, "one pair of steps is not enough", false, 0},
		{"ratio just below, shared flat", 10000, 10000 * (BottleneckRatio - 0.01), BoundElsewhere, "Every layout flattens together", true, 0},
		{"shared flat, per-worker scaling", 0.49 * 160000, ScalingEfficiency * 160000, ConnBottleneck, "Client-side connection bottleneck", false, 0},
		{"shared at ScalingEfficiency", ScalingEfficiency * 160000, ScalingEfficiency * 160000, Scales, "no bottleneck at these counts", false, 0},
		{"shared between thresholds", 0.6 * 160000, 0.6 * 160000, Inconclusive, "more connections help a little", false, 0},
		{"shared between thresholds, more connections worse", 0.6 * 160000, 0.5 * 160000, Inconclusive, "more connections do not help", false, 0},
		{"shared flat, client CPU at ClientCPUBusy", 10000, 10000 * (BottleneckRatio - 0.01), ClientCPUBound,
			"The client's own CPU is the limit: per-worker kept 90% of its 1 CPU busy", true, ClientCPUBusy},
		{"shared flat, client CPU just below ClientCPUBusy", 10000, 10000 * (BottleneckRatio - 0.01), BoundElsewhere, "Every layout flattens together", true, ClientCPUBusy - 0.01},
		{"between thresholds, client CPU full", 0.6 * 160000, 0.5 * 160000, ClientCPUBound, "more connections cannot help until the client has CPU to spare", false, 1},
		{"connection bottleneck with a full client CPU", 10000, 10000 * BottleneckRatio, ConnBottleneck, "use 32 connections", true, 1},
		{"scaling with a full client CPU", ScalingEfficiency * 160000, ScalingEfficiency * 160000, Scales, "no bottleneck at these counts", false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := append([]result.Record(nil), base...)
			if tc.confirm {
				var shared16 float64
				for _, r := range recs {
					if r.Spec.Inflight == 16 && r.Spec.ConnMode == "shared" {
						shared16 = r.ThroughputRPS
					}
				}
				for i := range recs {
					if recs[i].Spec.Inflight == 16 && recs[i].Spec.ConnMode != "shared" {
						recs[i].ThroughputRPS = shared16 * tc.pw / tc.shared
					}
				}
			}
			for i := range recs {
				if recs[i].Spec.Inflight != 32 {
					continue
				}
				if recs[i].Spec.ConnMode == "shared" {
					recs[i].ThroughputRPS = tc.shared
				} else {
					recs[i].ThroughputRPS = tc.pw
					if tc.busy > 0 {
						recs[i].ClientCPUNS = int64(tc.busy * float64(recs[i].DurationNS))
					}
				}
			}
			vs := Verdicts(recs)
			if len(vs) != 1 || vs[0].Kind != tc.want {
				t.Fatalf("got %+v, want one verdict of kind %q", vs, tc.want)
			}
			if !strings.Contains(vs[0].Text, tc.text) {
				t.Errorf("got %q, want it to contain %q", vs[0].Text, tc.text)
			}
		})
	}
}

// TestVerdictOneLayout: the shared layout alone gets the shared-only
// verdict, not a comparison; no records get none.
func TestVerdictOneLayout(t *testing.T) {
	var shared []result.Record
	for _, r := range fixture(t, "healthy.jsonl") {
		if r.Spec.ConnMode == "shared" {
			shared = append(shared, r)
		}
	}
	if vs := Verdicts(shared); len(vs) != 1 || vs[0].Kind != SharedOnly || !strings.Contains(vs[0].Text, "still scales") {
		t.Errorf("got %+v from one layout, want a shared-only verdict that it still scales", vs)
	}
	if vs := Verdicts(nil); len(vs) != 0 {
		t.Errorf("got %d verdicts from no records, want 0", len(vs))
	}
	if got, want := Text(nil), "No verdict"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start with %q", got, want)
	}
}

// TestVerdictPeakBelowTop: every layout flattens together at the top, but
// at a lower in-flight count more connections did help; the verdict says so
// without changing its kind.
func TestVerdictPeakBelowTop(t *testing.T) {
	recs := fixture(t, "server-bound.jsonl")
	if v := Verdicts(recs)[0]; v.PeakInflight != 0 || strings.Contains(v.Text, "though") {
		t.Fatalf("plain server-bound run: got peak at %d (%q), want none", v.PeakInflight, v.Text)
	}
	var shared8 float64
	for _, r := range recs {
		if r.Spec.Inflight == 8 && r.Spec.ConnMode == "shared" {
			shared8 = r.ThroughputRPS
		}
	}
	for i := range recs {
		if recs[i].Spec.Inflight == 8 && recs[i].Spec.ConnMode == "per-worker" {
			recs[i].ThroughputRPS = 1.5 * shared8
		}
	}
	v := Verdicts(recs)[0]
	if v.Kind != BoundElsewhere || v.PeakInflight != 8 || math.Abs(v.PeakRatio-1.5) > 1e-9 {
		t.Errorf("got kind %s, peak %.2fx at %d; want %s, 1.50x at 8", v.Kind, v.PeakRatio, v.PeakInflight, BoundElsewhere)
	}
	if !strings.Contains(v.Text, "At in-flight 8, though, more connections gave 1.50x shared's throughput") {
		t.Errorf("verdict text %q does not name the peak", v.Text)
	}
}
