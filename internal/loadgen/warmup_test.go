// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// readSplit serves rpclab's ping and counts the pings it answered before
// the step's CPU read (UsageService, whose reply begins the interval: see
// measuredServer) and after it: an event on the server, no clock, so a
// busy machine's pauses move no ping from one side to the other.
func readSplit(t *testing.T) (target string, before, after *atomic.Int64) {
	t.Helper()
	var read atomic.Bool
	before, after = new(atomic.Int64), new(atomic.Int64)
	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		switch {
		case strings.Contains(info.FullMethod, "UsageService"):
			read.Store(true)
		case read.Load():
			after.Add(1)
		default:
			before.Add(1)
		}
		return resp, err
	}
	return testutil.Serve(t, server.New(server.Options{}, grpc.ChainUnaryInterceptor(count))), before, after
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
			target, before, after := readSplit(t)
			spec := shortSpec(target)
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
			b, a := before.Load(), after.Load()
			t.Logf("server: %d before the CPU read, %d after it; record: %d", b, a, rec.Requests)
			// Boundary RPCs are the only slack: at most inflight
			// answered before the read whose replies came once the
			// interval had begun.
			slack := int64(2 * inflight)
			if warm := a + b - rec.Requests; warm <= slack {
				t.Fatalf("the server answered %d pings beside the record's %d, want more than %d (the warm-up's)", warm, rec.Requests, slack)
			}
			if rec.Spec.LoadModel == "open" {
				// The open loop's interval does not begin at a server
				// event, and a client behind its schedule sends warm-up
				// RPCs that arrive inside the interval, so count sends
				// instead: the server saw the interval's sends and the
				// warm-up's.
				if rec.Requests != *rec.Sent {
					t.Errorf("record counts %d requests of %d sent in the interval; the server saw %d in all: warm-up not excluded", rec.Requests, *rec.Sent, a+b)
				}
			} else if b <= slack || rec.Requests > a+slack {
				// Had the record counted the warm-up, it would hold about
				// a+b, b more than slack.
				t.Errorf("record counts %d requests; the server answered %d before the interval began and %d after (+%d): want more than %d before and at most %d in the record: warm-up not excluded",
					rec.Requests, b, a, slack, slack, a+slack)
			}
		})
	}
}
