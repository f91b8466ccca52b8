// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
)

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in    string
		q     float64
		bound time.Duration
	}{
		{"p99=1ms", 99, time.Millisecond},
		{"p999=250us", 99.9, 250 * time.Microsecond},
		{" p50=2s ", 50, 2 * time.Second},
		{"p99.5=3ms", 99.5, 3 * time.Millisecond},
		{"p100=1m", 100, time.Minute}, // the largest latency: HDR's quantile 100 is its max
	}
	for _, tc := range tests {
		got, err := ParseSLO(tc.in)
		if err != nil || got.Q != tc.q || got.Bound != tc.bound {
			t.Errorf("ParseSLO(%q) = %+v, %v; want q %v bound %v", tc.in, got, err, tc.q, tc.bound)
		}
	}
	for _, s := range []string{"p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms", "p101=1ms",
		"pNaN=1ms", "pnan=1ms", "pInf=1ms", "p+Inf=1ms", "p-Inf=1ms", "p0x1p6=1ms", "p9_9=1ms", "p1e2=1ms", "p+99=1ms"} {
		if _, err := ParseSLO(s); !errors.Is(err, ErrBadSLO) {
			t.Errorf("ParseSLO(%q): got %v, want an error wrapping ErrBadSLO", s, err)
		}
	}
}

// plainQuantile is the only spelling of a quantile --slo accepts.
var plainQuantile = regexp.MustCompile(`^p[0-9]+(\.[0-9]+)?$`)

// FuzzParseSLO: --slo never panics; what it accepts is a quantile in
// (0, 100] (never NaN or infinite), spelled in decimal digits, with a positive bound that parses back from its String, and
// what it refuses wraps ErrBadSLO.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99=1ms", "p999=250us", " p50=2s ", "p99.5=3ms", "p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms", "p101=1ms", "p=1ms", "p9.9.9=1ms", "p100=1m", "pNaN=1ms", "pInf=1ms", "p0x1p6=1ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !errors.Is(err, ErrBadSLO) {
				t.Fatalf("ParseSLO(%q): got %v, want an error wrapping ErrBadSLO", s, err)
			}
			return
		}
		if !(slo.Q > 0 && slo.Q <= 100) || slo.Bound <= 0 || !plainQuantile.MatchString(slo.Name) {
			t.Fatalf("ParseSLO(%q) = %+v: quantile or bound out of range", s, slo)
		}
		back, err := ParseSLO(slo.String())
		if err != nil || back.Q != slo.Q || back.Bound != slo.Bound {
			t.Fatalf("ParseSLO(%q) = %+v; its String %q parses to %+v, %v", s, slo, slo.String(), back, err)
		}
	})
}

// openRec is an open-loop record of conn at rate whose every RPC took lat.
func openRec(t *testing.T, conn string, rate float64, lat time.Duration, status string) result.Record {
	t.Helper()
	r := stats.NewRecorder()
	for range 100 {
		r.Record(lat, codes.OK)
	}
	h, err := stats.EncodeHistogram(stats.Merge(r).Hist)
	if err != nil {
		t.Fatal(err)
	}
	return result.Record{Status: status, ThroughputRPS: rate, HistogramHDR: h,
		Spec: result.Spec{LoadModel: "open", ConnMode: conn, RPC: "unary", Inflight: 8, RateRPS: rate}}
}

// TestSLOResults judges an open-loop sweep's records afterwards: per
// layout in the order first seen, rates ascending whatever the records'
// order, the highest sustained below the first miss, and that miss with
// its reason; closed-loop records are left out.
func TestSLOResults(t *testing.T) {
	slo := SLO{Name: "p99", Q: 99, Bound: time.Millisecond}
	closed := openRec(t, "shared", 0, time.Microsecond, result.StatusOK)
	closed.Spec.LoadModel = "closed"
	recs := []result.Record{
		openRec(t, "shared", 200, 100*time.Microsecond, result.StatusOK),
		openRec(t, "per-worker", 100, 100*time.Microsecond, result.StatusOverloaded),
		openRec(t, "shared", 100, 100*time.Microsecond, result.StatusOK),
		closed,
		openRec(t, "shared", 400, 5*time.Millisecond, result.StatusOK),
		openRec(t, "shared", 800, 100*time.Microsecond, result.StatusOK), // above the miss: not sustained
		openRec(t, "per-worker", 200, 100*time.Microsecond, result.StatusOK),
	}
	got := SLOResults(slo, recs)
	want := []struct {
		conn          string
		max, missed   float64
		whyHasAnyText string
	}{
		{"shared", 200, 400, "p99"},
		{"per-worker", 0, 100, "overloaded"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Conn != w.conn || g.RPC != "unary" || g.Inflight != 8 || g.MaxRate != w.max || g.Missed != w.missed || !strings.Contains(g.MissedWhy, w.whyHasAnyText) {
			t.Errorf("result %d: got %+v, want %s unary inflight 8, max rate %v, missed %v (%q in why)", i, g, w.conn, w.max, w.missed, w.whyHasAnyText)
		}
	}
	if got := SLOResults(slo, []result.Record{closed}); len(got) != 0 {
		t.Errorf("got %+v for a closed-loop sweep, want no results", got)
	}
}
