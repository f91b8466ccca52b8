// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/result"
)

// gateServer answers each call once its gate is open: a test that never
// opens it has a server that holds every RPC with no reply (a process
// stopped with SIGSTOP, a server deadlocked), and one that opens it at
// once has a healthy server. The gate opens when the test ends.
type gateServer struct {
	pb.UnimplementedBenchmarkServiceServer
	gate chan struct{}
	once sync.Once
}

func (g *gateServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	select {
	case <-g.gate:
		return &pb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *gateServer) open() { g.once.Do(func() { close(g.gate) }) }

// startGateServer serves a gateServer, its gate open when stalled is false.
func startGateServer(t *testing.T, stalled bool) string {
	t.Helper()
	g := &gateServer{gate: make(chan struct{})}
	if !stalled {
		g.open()
	}
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, g)
	target := startServer(t, s)
	t.Cleanup(g.open) // before the server's Stop (cleanups run last first)
	return target
}

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
		o := OpenSpec{Rates: []float64{200}, Arrival: Constant, Pacing: TimerPacing, MaxOutstanding: 4, Drain: time.Millisecond}
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
			ctx := testCtx(t)
			spec := shortSpec(startGateServer(t, tc.stalled))
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
