// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	gstats "google.golang.org/grpc/benchmark/stats"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/server"
	"github.com/rpclab/rpclab/stats"
)

var benchTarget = flag.String("loadgen.target", "", "BenchmarkUnaryRPC: the server to call (host:port; default: one in the test process, counted with the client)")

// BenchmarkUnaryRPC sets the closed-loop worker's per-RPC path beside
// grpc-go's own benchmark client's, over one connection to a real server,
// with inflight goroutines sharing b.N calls:
//
//   - path=grpc-client: the loop body of google.golang.org/grpc/benchmark/client
//     (its request, the generated stub, a new response per call,
//     context.Background(), time.Now and time.Since, grpc-go's benchmark
//     histogram): the floor.
//   - path=worker: caller.once on a step's frame (the pool of one
//     connection) under callContext, as runClosed runs it.
//   - path=run-ctx: the same with the run's shared cancellable context as
//     the call context, as the worker did before callContext: grpc-go then
//     registers each call with it under its one mutex.
//
// The server runs in this process (its work counts in every path alike)
// unless -loadgen.target names one; for instruction counts per RPC, run the
// test binary under valgrind --tool=callgrind with -loadgen.target and two
// -test.benchtime counts, and divide the difference (docs/peers.md).
func BenchmarkUnaryRPC(b *testing.B) {
	target := *benchTarget
	if target == "" {
		s := server.New(server.Options{})
		lis := listen(b)
		go s.Serve(lis)
		defer s.Stop()
		target = lis.Addr().String()
	}
	// As rpclab's own run context: cancellable, with no deadline (one would
	// add grpc-go's timeout header and the server's timer to run-ctx).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	spec := shortSpec(target)
	f, cause, err := openFrame(ctx, spec, Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}, Options{})
	if err != nil || cause != nil {
		b.Fatalf("openFrame: %v %v", err, cause)
	}
	defer f.close()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	phase.Store(phaseMeasure)

	// Each path makes the per-goroutine state of one in-flight RPC.
	paths := []struct {
		name string
		make func(b *testing.B) func()
	}{
		{"grpc-client", func(b *testing.B) func() {
			client := pb.NewBenchmarkServiceClient(cc)
			// The client's request at -req 0 -resp 0 (its payload type,
			// COMPRESSABLE, is the zero value): the same bytes as the worker's.
			req := &pb.SimpleRequest{ResponseType: pb.PayloadType_COMPRESSABLE,
				Payload: &pb.Payload{Type: pb.PayloadType_COMPRESSABLE, Body: make([]byte, 0)}}
			hist := gstats.NewHistogram(gstats.HistogramOptions{NumBuckets: 2495, GrowthFactor: .01})
			return func() {
				start := time.Now()
				if _, err := client.UnaryCall(context.Background(), req); err != nil {
					b.Error(err)
				}
				_ = hist.Add(time.Since(start).Nanoseconds())
			}
		}},
		{"worker", workerPath(runCtx, callContext(runCtx), f, &phase)},
		{"run-ctx", workerPath(runCtx, runCtx, f, &phase)},
	}
	for _, p := range paths {
		for _, n := range []int{1, 8, 32, 64} {
			b.Run(fmt.Sprintf("path=%s/inflight=%d", p.name, n), func(b *testing.B) {
				calls := make([]func(), n)
				for i := range calls {
					calls[i] = p.make(b)
					calls[i]() // warm: the first call sets up the state
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for _, call := range calls {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							call()
						}
					})
				}
				wg.Wait()
			})
		}
	}
}

// workerPath makes a closed-loop worker as runClosed does, whose calls go
// through f's connection under calls.
func workerPath(runCtx, calls context.Context, f *frame, phase *atomic.Int32) func(b *testing.B) func() {
	return func(b *testing.B) func() {
		p := pingOf(Benchmark, make([]byte, 0))
		cl := &caller{rec: stats.NewRecorder(), ping: p, resp: p.newResp()}
		return func() {
			if !cl.once(runCtx, calls, f.conns[0], phaseMeasure, phase) {
				b.Error("the run ended")
			}
		}
	}
}
