// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// Kill the server while RPCs run and restart it on the same port: RPCs
// fail with UNAVAILABLE meanwhile, then the pool recovers on its own.
func TestServerKilledAndRestarted(t *testing.T) {
	for _, pol := range []Policy{RoundRobin, LeastLoaded} {
		t.Run(pol.String(), func(t *testing.T) {
			srv := startServer(t)
			ctx := pooltest.Context(t)
			p := newPool(t, srv.addr, WithSize(3), WithPolicy(pol), WithRedialAfter(100*time.Millisecond))
			if err := p.Connect(ctx); err != nil {
				t.Fatalf("Connect: %v", err)
			}

			// Load: 4 callers, counting outcomes by code.
			var ok, unavailable atomic.Int64
			var mu sync.Mutex
			other := map[codes.Code]error{}
			loadCtx, stopLoad := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for loadCtx.Err() == nil {
						err := ping(loadCtx, p)
						switch c := status.Code(err); {
						case err == nil:
							ok.Add(1)
						case c == codes.Unavailable:
							unavailable.Add(1)
							time.Sleep(time.Millisecond) // fail-fast RPCs: don't spin
						case loadCtx.Err() != nil:
						default:
							mu.Lock()
							other[c] = err
							mu.Unlock()
						}
					}
				}()
			}
			defer func() { stopLoad(); wg.Wait() }()

			waitFor(ctx, t, "RPCs to succeed", func() bool { return ok.Load() > 100 })
			srv.stop()
			waitFor(ctx, t, "RPCs to fail with UNAVAILABLE", func() bool { return unavailable.Load() > 0 })
			waitFor(ctx, t, "no connection to be ready", func() bool { return p.Stats().Ready() == 0 })

			okBefore := ok.Load()
			srv.restart(ctx, t)
			waitFor(ctx, t, "RPCs to succeed after the restart", func() bool { return ok.Load() > okBefore+100 })
			waitFor(ctx, t, "every connection to be ready again", func() bool { return p.Stats().Ready() == 3 })
			stopLoad()
			wg.Wait()

			mu.Lock()
			defer mu.Unlock()
			for c, err := range other {
				t.Errorf("RPC failed with code %v (%v), want only %v", c, err, codes.Unavailable)
			}
			t.Logf("ok %d, unavailable %d, redials %v", ok.Load(), unavailable.Load(), p.Stats().Conns)
		})
	}
}

// A connection stuck in TRANSIENT_FAILURE is re-created in the background,
// and the pool connects once the target listens.
func TestRedialInTransientFailure(t *testing.T) {
	ctx := pooltest.Context(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens: every dial is refused

	p := newPool(t, addr, WithSize(2), WithRedialAfter(20*time.Millisecond))
	waitFor(ctx, t, "every connection to be re-created", func() bool {
		for _, c := range p.Stats().Conns {
			if c.Redials == 0 {
				return false
			}
		}
		return true
	})
	if err := ping(ctx, p); status.Code(err) != codes.Unavailable {
		t.Errorf("RPC while nothing listens: got %v, want code %v", err, codes.Unavailable)
	}
	srv := &testServer{addr: addr}
	srv.restart(ctx, t)
	t.Cleanup(srv.stop)
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect once the server listens: %v", err)
	}
	if err := ping(ctx, p); err != nil {
		t.Errorf("RPC once the server listens: %v", err)
	}
}

type whereKey struct{}

// One connection's server side stalls (its socket stays open, nothing is
// answered): LeastLoaded stops sending it RPCs after the first one stuck
// there; RoundRobin keeps sending it its share.
func TestStalledConnection(t *testing.T) {
	const size, rpcs = 4, 100
	tests := []struct {
		policy             Policy
		minStuck, maxStuck int
	}{
		{RoundRobin, rpcs / size, rpcs / size},
		{LeastLoaded, 0, 1},
	}
	srv := startServer(t)
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			ctx := pooltest.Context(t)
			proxy := startProxy(t, srv.addr)
			// The interceptor tells the test which connection an RPC took.
			where := grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				if ch, ok := ctx.Value(whereKey{}).(chan *grpc.ClientConn); ok {
					ch <- cc
				}
				return invoke(ctx, method, req, reply, cc, opts...)
			})
			p := newPool(t, proxy.addr(), WithSize(size), WithPolicy(tc.policy), WithDialOptions(where))
			if err := p.Connect(ctx); err != nil {
				t.Fatalf("Connect: %v", err)
			}
			// Freeze the proxied connection of slot 1.
			stalled := p.list()[1].cur.Load().cc
			var pr peer.Peer
			if err := ping(ctx, stalled, grpc.Peer(&pr)); err != nil {
				t.Fatalf("RPC on connection 1: %v", err)
			}
			proxy.freeze(t, pr.LocalAddr.String())

			rpcCtx, cancelRPCs := context.WithCancel(ctx)
			var stuck []chan error
			defer func() {
				cancelRPCs()
				for _, done := range stuck {
					<-done
				}
			}()
			for i := 0; i < rpcs; i++ {
				ch := make(chan *grpc.ClientConn, 1)
				done := make(chan error, 1)
				go func() { done <- ping(context.WithValue(rpcCtx, whereKey{}, ch), p) }()
				var cc *grpc.ClientConn
				select {
				case cc = <-ch:
				case err := <-done:
					select {
					case cc = <-ch: // it went through the interceptor and ended
						done <- err
					default:
						t.Fatalf("RPC %d ended before reaching a connection: %v", i, err)
					}
				case <-ctx.Done():
					t.Fatalf("RPC %d: %v", i, ctx.Err())
				}
				if cc == stalled {
					stuck = append(stuck, done)
					continue
				}
				if err := <-done; err != nil {
					t.Fatalf("RPC %d on a healthy connection: %v", i, err)
				}
			}
			if got := len(stuck); got < tc.minStuck || got > tc.maxStuck {
				t.Errorf("RPCs sent to the stalled connection: got %d, want %d..%d", got, tc.minStuck, tc.maxStuck)
			}
			st := p.Stats()
			if got, want := st.Conns[1].InFlight, int64(len(stuck)); got != want {
				t.Errorf("in flight on the stalled connection: got %d, want %d", got, want)
			}
			if got, want := st.Conns[1].State, connectivity.Ready; got != want {
				t.Errorf("state of the stalled connection: got %v, want %v (a stall is invisible to health checks)", got, want)
			}
		})
	}
}

// Picks race re-dials: connections are shut down behind the pool's back
// while RPCs run on every policy. Run with -race.
func TestPicksRaceRedials(t *testing.T) {
	srv := startServer(t)
	for _, pol := range []Policy{RoundRobin, LeastLoaded} {
		t.Run(pol.String(), func(t *testing.T) {
			ctx := pooltest.Context(t)
			p := newPool(t, srv.addr, WithSize(3), WithPolicy(pol))
			if err := p.Connect(ctx); err != nil {
				t.Fatalf("Connect: %v", err)
			}
			loadCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			var mu sync.Mutex
			bad := map[codes.Code]error{}
			var ok atomic.Int64
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for loadCtx.Err() == nil {
						err := ping(loadCtx, p)
						switch c := status.Code(err); {
						case err == nil:
							ok.Add(1)
						// An RPC on a connection closed under it is
						// cancelled by grpc-go; one racing the new
						// connection's handshake may be UNAVAILABLE.
						case c == codes.Canceled, c == codes.Unavailable, loadCtx.Err() != nil:
						default:
							mu.Lock()
							bad[c] = err
							mu.Unlock()
						}
					}
				}()
			}
			const kills = 10
			for k := 0; k < kills; k++ {
				i := k % p.Size()
				before := p.Stats().Conns[i].Redials
				_ = p.list()[i].cur.Load().cc.Close()
				waitFor(ctx, t, "the re-dial", func() bool { return p.Stats().Conns[i].Redials > before })
				n := ok.Load()
				waitFor(ctx, t, "RPCs to go on", func() bool { return ok.Load() > n+10 })
			}
			stop()
			wg.Wait()
			if err := p.Connect(ctx); err != nil {
				t.Fatalf("Connect after the re-dials: %v", err)
			}
			var redials uint64
			for _, c := range p.Stats().Conns {
				redials += c.Redials
			}
			if redials != kills {
				t.Errorf("re-dials: got %d, want %d", redials, kills)
			}
			if got := p.Stats().InFlight(); got != 0 {
				t.Errorf("in flight after the load: got %d, want 0", got)
			}
			if got := len(p.retiredConns()); got != 0 {
				t.Errorf("replaced connections left open: got %d, want 0", got)
			}
			for c, err := range bad {
				t.Errorf("RPC failed with code %v: %v", c, err)
			}
		})
	}
}

// retiredConns lists replaced connections not yet closed.
func (p *Pool) retiredConns() []*conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*conn
	for c := range p.retired {
		out = append(out, c)
	}
	return out
}
