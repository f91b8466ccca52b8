// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestStepCountsRPCsInFlightAtEnd: a step whose server holds every RPC
// ends with its RPCs in flight, counted in the record (in_flight_at_end)
// with the oldest one's wait (oldest_in_flight_ns): sent in the warm-up,
// it waited at least the whole interval. The closed loop keeps its 4
// callers' RPCs there; the open loop every send it made, up to its bound.
// A healthy server's step ends with its RPCs in flight for less than the
// interval.
func TestStepCountsRPCsInFlightAtEnd(t *testing.T) {
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 4}
	closed := func(ctx context.Context, spec *Spec) (*result.Record, error) {
		return RunStep(ctx, spec, step, Options{})
	}
	open := func(ctx context.Context, spec *Spec) (*result.Record, error) {
		o := OpenSpec{Rates: []float64{200}, OpenLoop: OpenLoop{Arrival: Constant, Pacing: TimerPacing, MaxOutstanding: 4, Drain: time.Millisecond}}
		return RunOpenStep(ctx, spec, step, o, 200, Options{})
	}
	for _, tc := range []struct {
		name    string
		run     func(context.Context, *Spec) (*result.Record, error)
		stalled bool
	}{
		{"closed loop, stalled server", closed, true},
		{"open loop, stalled server", open, true},
		{"closed loop, healthy server", closed, false},
		{"open loop, healthy server", open, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			spec := shortSpec(testutil.ServeGate(t, tc.stalled))
			spec.Warmup = 200 * time.Millisecond
			spec.Conns, spec.Inflight = []ConnMode{step.Conn}, []int{step.Inflight}
			rec, err := tc.run(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if rec.InFlightAtEnd == nil {
				t.Fatalf("got no in_flight_at_end, want it (status %s: %s)", rec.Status, rec.Error)
			}
			n, oldest := *rec.InFlightAtEnd, rec.OldestInFlightNS
			t.Logf("status %s, %d requests, %d in flight at the end, the oldest for %v over an interval of %v",
				rec.Status, rec.Requests, n, time.Duration(oldest), time.Duration(rec.DurationNS))
			if tc.stalled {
				if n != 4 || oldest < rec.DurationNS {
					t.Errorf("got %d in flight, the oldest for %v; want 4, for at least the interval (%v)", n, time.Duration(oldest), time.Duration(rec.DurationNS))
				}
				if rec.Requests != 0 {
					t.Errorf("got %d requests, want 0 (no reply came)", rec.Requests)
				}
				return
			}
			// (A busy machine may leave the open loop's client behind:
			// overloaded is its own finding, not this test's.)
			if rec.Requests == 0 || oldest >= rec.DurationNS {
				t.Errorf("got status %s, %d requests, the oldest in flight for %v; want some requests, the oldest in flight for less than the interval (%v)",
					rec.Status, rec.Requests, time.Duration(oldest), time.Duration(rec.DurationNS))
			}
			if err := result.Check(rec); err != nil {
				t.Errorf("Check: got %v, want nil", err)
			}
		})
	}
}
