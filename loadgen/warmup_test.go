// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/server"
)

// arrivals is a ping server that notes when each request arrives.
type arrivals struct {
	server.Ping
	mu sync.Mutex
	at []time.Time
}

func (a *arrivals) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	a.mu.Unlock()
	return a.Ping.UnaryCall(ctx, req)
}

// split counts the arrivals before t and those in [t, t+d].
func (a *arrivals) split(t time.Time, d time.Duration) (before, in int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, x := range a.at {
		switch {
		case x.Before(t):
			before++
		case !x.After(t.Add(d)):
			in++
		}
	}
	return before, in
}

// TestWarmupExcludedFromRecord counts requests on the server: the warm-up
// sends many, and the record counts only those of its interval, for the
// closed and the open loop (issue 16).
func TestWarmupExcludedFromRecord(t *testing.T) {
	tests := []struct {
		name string
		run  func(ctx context.Context, spec *Spec, step Step) (*result.Record, error)
	}{
		{"closed", func(ctx context.Context, spec *Spec, step Step) (*result.Record, error) {
			return RunStep(ctx, spec, step, Options{})
		}},
		{"open", func(ctx context.Context, spec *Spec, step Step) (*result.Record, error) {
			return RunOpenStep(ctx, spec, step, OpenSpec{Rates: []float64{1000}, OpenLoop: OpenLoop{MaxOutstanding: DefaultMaxOutstanding}}, 1000, Options{})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &arrivals{}
			s := grpc.NewServer()
			pb.RegisterBenchmarkServiceServer(s, a)
			spec := shortSpec(testutil.Serve(t, s))
			spec.Warmup, spec.Interval = 400*time.Millisecond, 400*time.Millisecond
			spec.Conns = []ConnMode{{Kind: Shared}}
			const inflight = 2
			rec, err := tc.run(testutil.Context(t), spec, Step{Conn: spec.Conns[0], RPC: Unary, Inflight: inflight})
			if err != nil {
				t.Fatal(err)
			}
			// A loaded machine can leave the open loop behind its
			// schedule (overloaded); what it sent still counts.
			if rec.Status != result.StatusOK && rec.Status != result.StatusOverloaded {
				t.Fatalf("got status %q (%s), want ok", rec.Status, rec.Error)
			}
			before, in := a.split(rec.StartedAt, time.Duration(rec.DurationNS))
			total := int64(len(a.at))
			t.Logf("server: %d before the interval, %d in it, %d in all; record: %d", before, in, total, rec.Requests)
			if warm := total - rec.Requests; warm < 20 {
				t.Fatalf("the server saw %d requests beside the record's, want the warm-up's (at least 20)", warm)
			}
			slack := int64(inflight) + in/50
			if rec.Spec.LoadModel == "open" {
				// A client behind its schedule sends warm-up RPCs that
				// arrive inside the interval, so count sends instead: the
				// server saw the interval's sends and the warm-up's.
				if rec.Requests != *rec.Sent {
					t.Errorf("record counts %d requests of %d sent in the interval; the server saw %d in all: warm-up not excluded", rec.Requests, *rec.Sent, total)
				}
			} else if rec.Requests > in+slack || rec.Requests < in-slack {
				// Boundary RPCs (in flight as the phase changes) are the
				// only slack.
				t.Errorf("record counts %d requests, server saw %d in the interval (±%d): warm-up not excluded", rec.Requests, in, slack)
			}
			if rec.Requests > total-before+slack {
				t.Errorf("record counts %d requests of %d, more than the %d after warm-up", rec.Requests, total, total-before)
			}
		})
	}
}
