// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// holdServer is a grpc-go server on loopback that lets each connection
// carry streams RPCs at once (grpc.MaxConcurrentStreams) and holds every
// unary call until release is closed, counting the calls it holds.
type holdServer struct {
	addr    string
	held    atomic.Int64
	release chan struct{}
	once    sync.Once
}

func startHoldServer(t *testing.T, streams uint32) *holdServer {
	t.Helper()
	h := &holdServer{release: make(chan struct{})}
	ping := &pooltest.Ping{Hold: func(ctx context.Context) {
		h.held.Add(1)
		defer h.held.Add(-1)
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}}
	h.addr = pooltest.Serve(t, pooltest.NewServer(ping, grpc.MaxConcurrentStreams(streams)))
	t.Cleanup(h.unblock)
	return h
}

func (h *holdServer) unblock() { h.once.Do(func() { close(h.release) }) }

// conns is the pool's connections to h as the kernel sees them.
func (h *holdServer) conns(t *testing.T) int {
	t.Helper()
	n, err := pooltest.ConnsTo(h.addr)
	if err != nil {
		t.Fatalf("count connections: %v", err)
	}
	return n
}

// hold starts n unary calls on p, waits until h holds want calls in all,
// and returns a wait for the n calls' end.
func (h *holdServer) hold(ctx context.Context, t *testing.T, p *Pool, n int, want int64) func() {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- ping(ctx, p)
		}()
	}
	waitFor(ctx, t, fmt.Sprintf("%d calls held by the server", want), func() bool { return h.held.Load() == want })
	return func() {
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("held call: %v", err)
			}
		}
	}
}

// TestGrowthAtStreamLimit: against a grpc-go server that allows 4 streams
// per connection, 16 held calls on a pool of size 1 with growth on (max
// 8, limit 4) run on 4 connections as the kernel sees them, 4 calls on
// each; once the calls end, the grown connections are retired after the
// idle time and 1 connection is left. With growth off the pool keeps 1
// connection and the server holds only 4 calls (the rest queue in
// grpc-go).
func TestGrowthAtStreamLimit(t *testing.T) {
	for _, policy := range []Policy{RoundRobin, LeastLoaded} {
		t.Run("on "+policy.String(), func(t *testing.T) { testGrowthOn(t, policy) })
	}
	t.Run("off", func(t *testing.T) {
		srv := startHoldServer(t, 4)
		ctx := pooltest.Context(t)
		p := newPool(t, srv.addr, WithSize(1))
		if err := p.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		wait := srv.hold(ctx, t, p, 16, 4)
		waitFor(ctx, t, "16 calls in flight in the pool", func() bool { return p.Stats().InFlight() == 16 })
		if got := srv.conns(t); got != 1 {
			t.Errorf("connections as the kernel sees them with growth off: got %d, want 1", got)
		}
		if got := srv.held.Load(); got != 4 {
			t.Errorf("calls held by the server with growth off: got %d, want 4 (its stream limit)", got)
		}
		srv.unblock()
		wait()
	})
}

// TestGrowthAtMax: at its max connections the pool picks among all of
// them and the calls past the limit wait in grpc-go for a free stream.
func TestGrowthAtMax(t *testing.T) {
	srv := startHoldServer(t, 4)
	ctx := pooltest.Context(t)
	p := newPool(t, srv.addr, WithSize(1), WithStreamLimit(4, 2), WithPolicy(LeastLoaded))
	wait := srv.hold(ctx, t, p, 12, 8)
	waitFor(ctx, t, "12 calls in flight in the pool", func() bool { return p.Stats().InFlight() == 12 })
	if got := srv.conns(t); got != 2 {
		t.Errorf("connections at max 2: got %d, want 2", got)
	}
	srv.unblock()
	wait()
}

// testGrowthOn is TestGrowthAtStreamLimit with growth on under policy.
func testGrowthOn(t *testing.T, policy Policy) {
	srv := startHoldServer(t, 4)
	ctx := pooltest.Context(t)
	p := newPool(t, srv.addr, WithSize(1), WithStreamLimit(4, 8), WithGrowthIdle(200*time.Millisecond), WithPolicy(policy))
	if err := p.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	wait := srv.hold(ctx, t, p, 16, 16)
	if got := srv.conns(t); got != 4 {
		t.Errorf("connections as the kernel sees them with 16 held calls: got %d, want 4", got)
	}
	st := p.Stats()
	if len(st.Conns) != 4 {
		t.Errorf("pool size with 16 held calls: got %d, want 4", len(st.Conns))
	}
	for i, c := range st.Conns {
		if c.InFlight != 4 {
			t.Errorf("connection %d: %d RPCs in flight, want 4 (the limit)", i, c.InFlight)
		}
	}
	srv.unblock()
	wait()
	waitFor(ctx, t, "the grown connections retired", func() bool { return p.Size() == 1 && srv.conns(t) == 1 })
}

// TestGrowSlotAfterAnotherGrewToMax: an RPC that saw one connection at
// the limit, while another RPC grew the pool to its max, is sent to look
// again (and then finds the new connection's free streams), not to pick
// among the one connection it saw.
func TestGrowSlotAfterAnotherGrewToMax(t *testing.T) {
	srv := startHoldServer(t, 4)
	ctx := pooltest.Context(t)
	p := newPool(t, srv.addr, WithSize(1), WithStreamLimit(4, 2))
	wait := srv.hold(ctx, t, p, 4, 4)
	if s, again := p.growSlot(1); s == nil || again {
		t.Fatalf("first growth: slot %v, again %v; want a new slot", s, again)
	}
	if s, again := p.growSlot(1); s != nil || !again {
		t.Fatalf("growth by an RPC that saw 1 slot, the pool now at its max: slot %v, again %v; want look again", s, again)
	}
	if s, again := p.growSlot(2); s != nil || again {
		t.Fatalf("growth at the max: slot %v, again %v; want none", s, again)
	}
	srv.unblock()
	wait()
}

// TestGrowSlotWithAStreamLeft: an RPC that saw every connection at the
// limit, in a look that other RPCs changed while it was taken (one left
// a connection it had looked at, or a stream ended since), is sent to
// look again while a stream is free, and grows the pool once none is.
func TestGrowSlotWithAStreamLeft(t *testing.T) {
	srv := startHoldServer(t, 4)
	ctx := pooltest.Context(t)
	p := newPool(t, srv.addr, WithSize(1), WithStreamLimit(4, 2))
	wait := srv.hold(ctx, t, p, 3, 3)
	if s, again := p.growSlot(1); s != nil || !again {
		t.Fatalf("growth with 3 of 4 streams taken: slot %v, again %v; want look again", s, again)
	}
	wait4 := srv.hold(ctx, t, p, 1, 4)
	if s, again := p.growSlot(1); s == nil || again {
		t.Fatalf("growth with 4 of 4 streams taken: slot %v, again %v; want a new slot", s, again)
	}
	srv.unblock()
	wait()
	wait4()
}

// TestGrowthUnderChurn: 16 callers, each calling again as soon as its
// call returns, through a pool of size 1 growing at a stream limit of 4,
// never make it grow past 4 connections, however their picks interleave
// (a pick's look at the connections' counts is not one moment: see
// growSlot).
func TestGrowthUnderChurn(t *testing.T) {
	addr := pooltest.Serve(t, pooltest.NewServer(&pooltest.Ping{}, grpc.MaxConcurrentStreams(4)))
	ctx := pooltest.Context(t)
	p := newPool(t, addr, WithSize(1), WithStreamLimit(4, 8))
	if err := p.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var left atomic.Int64
	left.Store(40000)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := ping(ctx, p); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := p.claimed.Load(); n != 0 {
		t.Errorf("RPCs counted in flight after every call returned: %d, want 0", n)
	}
	if got := len(p.Stats().Conns); got > 4 {
		t.Errorf("pool size after 40,000 calls by 16 callers at a stream limit of 4: got %d, want at most 4", got)
	}
}
