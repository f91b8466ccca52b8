// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package flow

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

func smallSpec() *Spec {
	return &Spec{
		Transports:  Transports,
		Payloads:    []int64{1000, 256 << 10},
		RTTs:        []time.Duration{0, 2 * time.Millisecond},
		RPCs:        3,
		Budget:      10 * time.Second,
		FixedWindow: 64 << 10,
	}
}

// TestRunAllTransports runs every transport through the emulated network
// and checks each cell's record.
func TestRunAllTransports(t *testing.T) {
	ctx := testutil.LongContext(t)
	s := smallSpec()
	var recs []*result.FlowRecord
	var seen []Cell
	var ended []*result.FlowRecord
	err := Run(ctx, s, func(r *result.FlowRecord) error { recs = append(recs, r); return nil },
		func(e Event) {
			switch e.Kind {
			case CellStarted:
				seen = append(seen, e.Step)
			case CellEnded:
				ended = append(ended, e.Record)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), len(s.Cells()); got != want || len(seen) != want {
		t.Fatalf("got %d records, %d progress calls; want %d", got, len(seen), want)
	}
	if !slices.Equal(ended, recs) {
		t.Errorf("got ends with records %v, want each record sunk, in order (%v)", ended, recs)
	}
	for _, r := range recs {
		name := r.Transport + "/" + time.Duration(r.RTTNS).String()
		if r.Status != result.StatusOK || len(r.RPCNS) != 3 || r.Kind != result.KindFlow {
			t.Errorf("%s: got status %q (%s), %d RPCs, kind %q; want ok, 3, %q", name, r.Status, r.Error, len(r.RPCNS), r.Kind, result.KindFlow)
			continue
		}
		for i, d := range r.RPCNS {
			// The emulated RTT is a floor for every request.
			if d < r.RTTNS {
				t.Errorf("%s: RPC %d took %v, want at least the RTT", name, i+1, time.Duration(d))
			}
		}
		if r.FirstNS != r.RPCNS[0] || r.SteadyNS <= 0 {
			t.Errorf("%s: got first %d steady %d", name, r.FirstNS, r.SteadyNS)
		}
		if (r.Transport == GRPCFixed) != (r.WindowBytes == 64<<10) {
			t.Errorf("%s: got window %d", name, r.WindowBytes)
		}
	}
}

// TestBudgetTruncates: a fixed 64 KiB window over 20 ms RTT needs 16
// round trips per MiB, so a short budget ends the cell early.
func TestBudgetTruncates(t *testing.T) {
	ctx := testutil.LongContext(t)
	s := &Spec{Transports: []string{GRPCFixed}, Payloads: []int64{4 << 20}, RTTs: []time.Duration{20 * time.Millisecond},
		RPCs: 50, Budget: 300 * time.Millisecond, FixedWindow: 64 << 10}
	var rec *result.FlowRecord
	if err := Run(ctx, s, func(r *result.FlowRecord) error { rec = r; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if rec.Status != result.StatusTruncated || len(rec.RPCNS) >= 50 {
		t.Fatalf("got status %q with %d RPCs (%s), want truncated", rec.Status, len(rec.RPCNS), rec.Error)
	}
}

func TestSteady(t *testing.T) {
	tests := []struct {
		name     string
		rpcs     []int64
		want     int64
		wantFrom int
	}{
		{"one", []int64{7}, 7, 1},
		{"four: last half", []int64{100, 50, 10, 20}, 15, 3},
		{"twelve: after the tenth", []int64{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 4, 6}, 5, 11},
		{"thirteen", []int64{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 4, 6, 1}, 4, 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := result.FlowRecord{RPCNS: tc.rpcs}
			Steady(&r)
			if r.SteadyNS != tc.want || r.SteadyFrom != tc.wantFrom || r.FirstNS != tc.rpcs[0] {
				t.Errorf("got steady %d from %d first %d, want %d from %d first %d", r.SteadyNS, r.SteadyFrom, r.FirstNS, tc.want, tc.wantFrom, tc.rpcs[0])
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"unknown transport", func(s *Spec) { s.Transports = []string{"carrier-pigeon"} }, "unknown transport"},
		{"negative rtt", func(s *Spec) { s.RTTs = []time.Duration{-time.Millisecond} }, "negative RTT"},
		{"huge payload", func(s *Spec) { s.Payloads = []int64{2 << 30} }, "outside"},
		{"no rpcs", func(s *Spec) { s.RPCs = 0 }, "at least 1"},
		{"small window", func(s *Spec) { s.FixedWindow = 1024 }, "BDP"},
		{"no budget", func(s *Spec) { s.Budget = 0 }, "budget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := smallSpec()
			tc.edit(s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "flow: ") {
				t.Errorf("got %v, want a flow error containing %q", err, tc.want)
			}
		})
	}
	if err := smallSpec().Validate(); err != nil {
		t.Errorf("valid spec: got %v", err)
	}
}
