// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"testing"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// TestRPCPathAllocs: the pool's part of a unary RPC (begin: the pick and
// the adaptive pool's write-meter stamp; release)
// allocates nothing and takes no lock, on a fixed pool and on an adaptive
// one, with either pick policy. It runs while the test holds the pool's
// mutex and its history's: a path that took either would never finish.
func TestRPCPathAllocs(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"fixed round-robin", []Option{WithSize(4)}},
		{"fixed least-loaded", []Option{WithSize(4), WithPolicy(LeastLoaded)}},
		{"growth round-robin", []Option{WithSize(4), WithStreamLimit(100, 8)}},
		{"growth least-loaded", []Option{WithSize(4), WithStreamLimit(100, 8), WithPolicy(LeastLoaded)}},
		{"adaptive round-robin", []Option{WithAdaptive(4, 4)}},
		{"adaptive least-loaded", []Option{WithAdaptive(4, 4), WithPolicy(LeastLoaded)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, srv.addr, tc.opts...)
			if err := p.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			p.mu.Lock()
			if p.ctl != nil {
				p.ctl.mu.Lock()
			}
			allocs := make(chan float64, 1)
			go func() {
				allocs <- testing.AllocsPerRun(1000, func() {
					p.begin().release()
				})
			}()
			select {
			case n := <-allocs:
				if n != 0 {
					t.Errorf("allocations per RPC on the pool's path: got %v, want 0", n)
				}
			case <-ctx.Done():
				t.Fatal("the RPC path did not finish while the pool's locks were held: it takes a lock")
			}
			if p.ctl != nil {
				p.ctl.mu.Unlock()
			}
			p.mu.Unlock()
			if got := p.Stats().InFlight(); got != 0 {
				t.Errorf("in flight after begin and end: got %d, want 0", got)
			}
		})
	}
}
