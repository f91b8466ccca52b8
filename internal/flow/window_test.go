// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package flow

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// grpc-fixed is held by its window: through rpclab's netem at an emulated
// RTT, a 1 MiB request on 64 KiB windows needs about payload/window round
// trips (the sender may have one window in flight per RTT). grpc-dynamic's
// windows grow (BDP estimation): after the first requests it needs under
// half as many. Removing the fixed window settings on either side, or turning BDP
// estimation off for grpc-dynamic, makes this fail.
func TestWindowsHoldAndGrow(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	const (
		rtt     = 40 * time.Millisecond // long beside the CPU a 1 MiB RPC costs, even under -race
		payload = 1 << 20
		window  = 64 << 10
		trips   = payload / window // 16
	)
	s := &Spec{
		Transports: []string{GRPCFixed, GRPCDynamic}, Payloads: []int64{payload}, RTTs: []time.Duration{rtt},
		RPCs: 5, Budget: 30 * time.Second, FixedWindow: window,
	}
	recs := map[string]*result.FlowRecord{}
	if err := Run(ctx, s, func(r *result.FlowRecord) error { recs[r.Transport] = r; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	fixed, dyn := recs[GRPCFixed], recs[GRPCDynamic]
	for _, r := range []*result.FlowRecord{fixed, dyn} {
		if r == nil || r.Status != result.StatusOK || len(r.RPCNS) != s.RPCs {
			t.Fatalf("got %+v, want both cells ok with %d RPCs", r, s.RPCs)
		}
	}
	// Fixed: every RPC, the warm ones too, takes at least ~3/4 of the
	// payload/window round trips (the last window's update is not waited for).
	floor := time.Duration(trips*3/4) * rtt
	for i, d := range fixed.RPCNS {
		if time.Duration(d) < floor {
			t.Errorf("grpc-fixed RPC %d took %v, want at least %v (~%d round trips of %v on a %d-byte window)",
				i+1, time.Duration(d), floor, trips, rtt, window)
		}
	}
	// Dynamic: after warm-up, under half of those round trips, and
	// faster than any fixed one.
	warm := slices.Min(dyn.RPCNS[2:])
	if limit := time.Duration(trips/2) * rtt; time.Duration(warm) > limit {
		t.Errorf("grpc-dynamic's fastest RPC after warm-up took %v, want under %v: its windows did not grow", time.Duration(warm), limit)
	}
	if warm >= slices.Min(fixed.RPCNS) {
		t.Errorf("grpc-dynamic after warm-up %v, grpc-fixed at best %v: want dynamic faster", time.Duration(warm), time.Duration(slices.Min(fixed.RPCNS)))
	}
	t.Logf("RTT %v: grpc-fixed %v, grpc-dynamic %v", rtt, durations(fixed.RPCNS), durations(dyn.RPCNS))

	// The study sends requests, so its times depend on the server's
	// receive windows. The client's own windows govern responses: a 1 MiB
	// response to grpc-fixed's client is held by them in the same way.
	srv, err := startServers(s, payload)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.close()
	for _, tr := range []string{GRPCFixed, GRPCDynamic} {
		times := downloads(ctx, t, s, srv, tr, rtt, payload, 4)
		switch {
		case tr == GRPCFixed && time.Duration(slices.Min(times)) < floor:
			t.Errorf("grpc-fixed's client received 1 MiB in %v, want at least %v: its window did not hold", durations(times), floor)
		case tr == GRPCDynamic && time.Duration(slices.Min(times[2:])) > time.Duration(trips/2)*rtt:
			t.Errorf("grpc-dynamic's client received 1 MiB in %v, want under %v after warm-up", durations(times), time.Duration(trips/2)*rtt)
		}
	}
}

// downloads times n responses of size bytes to transport's client through
// a netem proxy of the given RTT.
func downloads(ctx context.Context, t *testing.T, s *Spec, srv *servers, transport string, rtt time.Duration, size, n int) []int64 {
	t.Helper()
	px, err := netem.Listen("127.0.0.1:0", srv.addr(transport), netem.Network{Up: netem.Link{Delay: rtt / 2}, Down: netem.Link{Delay: rtt / 2}})
	if err != nil {
		t.Fatal(err)
	}
	go px.Serve(ctx)
	defer px.Close()
	cl, err := dial(ctx, transport, px.Addr().String(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	g := cl.(*grpcClient)
	var out []int64
	for range n {
		t0 := time.Now()
		resp, err := g.c.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: int32(size)}, grpc.MaxCallRecvMsgSize(2*size))
		if err != nil || len(resp.GetPayload().GetBody()) != size {
			t.Fatalf("%s: download: %v", transport, err)
		}
		out = append(out, int64(time.Since(t0)))
	}
	return out
}

func durations(ns []int64) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n)
	}
	return out
}

// A run stopped in the middle of a cell keeps the RPCs that cell measured,
// marked interrupted, and hands it to the sink before returning.
func TestRunKeepsTheInterruptedCell(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	rctx, stop := context.WithCancel(ctx)
	s := &Spec{
		Transports: []string{GRPCFixed}, Payloads: []int64{1 << 20}, RTTs: []time.Duration{10 * time.Millisecond},
		RPCs: 1000, Budget: 30 * time.Second, FixedWindow: 64 << 10,
	}
	var recs []*result.FlowRecord
	sink := func(r *result.FlowRecord) error {
		recs = append(recs, r)
		return nil
	}
	// Stop once the cell has measured two RPCs (an event, not a time: a
	// busy machine may take longer than any fixed wait for the first). A
	// Run that ignored the stop would end at the budget with no error.
	measured = func(n int) {
		if n == 2 {
			stop()
		}
	}
	t.Cleanup(func() { measured = nil })
	err := Run(rctx, s, sink, nil)
	if err == nil || rctx.Err() == nil {
		t.Fatalf("Run = %v, want the context's error", err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d records, want the interrupted cell", len(recs))
	}
	if r := recs[0]; r.Status != result.StatusInterrupted || len(r.RPCNS) == 0 || r.SteadyNS <= 0 && len(r.RPCNS) > 10 {
		t.Errorf("got status %q with %d RPCs, want %q with the RPCs measured before the stop", r.Status, len(r.RPCNS), result.StatusInterrupted)
	}
}
