// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

// spread runs b.N calls of op over exactly g goroutines (b.RunParallel
// would run a multiple of GOMAXPROCS), each taking an equal share up front
// so that no shared counter adds contention of its own.
func spread(b *testing.B, g int, op func() error) {
	b.Helper()
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := 0; i < g; i++ {
		share := b.N / g
		if i < b.N%g {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < share; k++ {
				if err := op(); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

var benchParallel = []int{1, 8, 64}

// BenchmarkUnary: unary pings through a pool of N connections against
// rpclab's server on loopback in the same process, from P goroutines each
// keeping one RPC in flight. conns=1 is one connection behind the pool;
// BenchmarkUnaryClientConn is the same load on a bare grpc.ClientConn.
func BenchmarkUnary(b *testing.B) {
	srv := startServer(b)
	for _, n := range []int{1, 2, 4, 8} {
		for _, par := range benchParallel {
			b.Run(fmt.Sprintf("conns=%d/parallel=%d", n, par), func(b *testing.B) {
				ctx := pooltest.Context(b)
				p := newPool(b, srv.addr, WithSize(n))
				if err := p.Connect(ctx); err != nil {
					b.Fatal(err)
				}
				benchUnary(ctx, b, p, par)
			})
		}
	}
}

// benchTarget is a server in another process for BenchmarkUnaryHeld
// (-pool.target host:port, rpclab serve): under callgrind, whose counts
// cover one process, the client's instructions alone. Empty: a server in
// this process.
var benchTarget = flag.String("pool.target", "", "BenchmarkUnaryHeld's server (host:port); empty: one in the test's process")

// BenchmarkUnaryHeld is what the adaptive mode's machinery costs with
// nothing to decide: a pool held at N (WithAdaptive(N, N): it never grows,
// shrinks or parks) beside a fixed pool of N, the same load. What differs
// is the write meter on each connection, two clock reads and an atomic add
// per RPC, the sampler and the control loop. Allocations per RPC are the
// same in both; for time, run one mode per process
// (-bench 'UnaryHeld/conns=8/parallel=8/fixed', then .../adaptive, in
// turn): in one process the later sub-benchmarks ran up to a fifth slower
// here whichever mode they were. rpclab sweep --conn pool:N,pool:auto:N:N
// measures the same across processes; with -pool.target, callgrind
// counts the client's instructions per RPC alone.
func BenchmarkUnaryHeld(b *testing.B) {
	addr := *benchTarget
	if addr == "" {
		addr = startServer(b).addr
	}
	for _, n := range []int{2, 8} {
		for _, par := range []int{8, 64} {
			for _, mode := range []struct {
				name string
				opt  Option
			}{{"fixed", WithSize(n)}, {"adaptive", WithAdaptive(n, n)}} {
				b.Run(fmt.Sprintf("conns=%d/parallel=%d/%s", n, par, mode.name), func(b *testing.B) {
					ctx := pooltest.Context(b)
					p := newPool(b, addr, mode.opt)
					if err := p.Connect(ctx); err != nil {
						b.Fatal(err)
					}
					benchUnary(ctx, b, p, par)
				})
			}
		}
	}
}

func BenchmarkUnaryClientConn(b *testing.B) {
	srv := startServer(b)
	for _, par := range benchParallel {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			ctx := pooltest.Context(b)
			cc, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			benchUnary(ctx, b, cc, par)
		})
	}
}

func benchUnary(ctx context.Context, b *testing.B, cc grpc.ClientConnInterface, par int) {
	client := pb.NewBenchmarkServiceClient(cc)
	req := &pb.SimpleRequest{ResponseSize: 1}
	if _, err := client.UnaryCall(ctx, req); err != nil { // warm
		b.Fatal(err)
	}
	b.ReportAllocs()
	spread(b, par, func() error {
		_, err := client.UnaryCall(ctx, req)
		return err
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rpc/s")
}

// BenchmarkPick measures the pick path alone (pick and release, no RPC) on
// a pool of 4 ready connections, from 1 to 64 goroutines: a fixed pool
// (WithSize(4)) beside an adaptive one held at 4 (WithAdaptive(4, 4)),
// whose begin also stamps the connection's write meter (reading the clock
// when no stamp is set: here the first RPC's stays, as no write clears it).
// Without a lock the time per pick stays flat as goroutines are added.
func BenchmarkPick(b *testing.B) {
	srv := startServer(b)
	sizes := []struct {
		name string
		opt  Option
	}{{"fixed", WithSize(4)}, {"adaptive", WithAdaptive(4, 4)}, {"growth", Option(func(c *config) error {
		c.size, c.streamLimit, c.maxConns = 4, 1000, 8 // growth on, never needed
		return nil
	})}}
	for _, pol := range []Policy{RoundRobin, LeastLoaded} {
		for _, size := range sizes {
			b.Run("policy="+pol.String()+"/size="+size.name, func(b *testing.B) {
				ctx := pooltest.Context(b)
				p := newPool(b, srv.addr, size.opt, WithPolicy(pol))
				if err := p.Connect(ctx); err != nil {
					b.Fatal(err)
				}
				for _, g := range []int{1, 8, 64} {
					b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
						b.ReportAllocs()
						spread(b, g, func() error {
							p.begin().release()
							return nil
						})
					})
				}
			})
		}
	}
}

// BenchmarkWriteMeter is the write meter's cost when every RPC gets a
// socket write of its own (one RPC in flight per connection, the worst
// case): the pick's stamp, which the write then clears, and the Write's,
// from 1 to 64 goroutines sharing one meter. BenchmarkPick's adaptive
// case leaves the write out: without writes the stamp stays.
func BenchmarkWriteMeter(b *testing.B) {
	for _, g := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			m := &writeMeter{}
			m.dialed.Store(true)
			b.ReportAllocs()
			spread(b, g, func() error {
				m.queuedAt(mono())
				m.wrote(mono())
				m.writing.Store(0)
				return nil
			})
		})
	}
}
