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

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

var benchTarget = flag.String("loadgen.target", "", "BenchmarkUnaryRPC: the server to call (host:port; default: one in the test process, counted with the client)")

// BenchmarkUnaryRPC sets the closed-loop worker's per-RPC path beside
// grpc-go's own benchmark client's, against a real server, with inflight
// goroutines sharing b.N calls over one connection (conn=shared) or one
// each (conn=per-worker):
//
//   - path=grpc-client: the loop body of google.golang.org/grpc/benchmark/client
//     (its request, the generated stub, a new response per call,
//     context.Background(), time.Now and time.Since, grpc-go's benchmark
//     histogram) on bare ClientConns: the floor.
//   - path=worker: closedRun.once on a step's frame (its pools) under
//     callContext, as runClosed runs it.
//   - path=run-ctx: the same with the run's shared cancellable context as
//     the call context, as the worker did before callContext: grpc-go then
//     registers each call with it under its one mutex.
//
// The server runs in this process (its work counts in every path alike)
// unless -loadgen.target names one; for instruction counts per RPC, run the
// test binary under valgrind --tool=callgrind with -loadgen.target and two
// -test.benchtime counts, and divide the difference (experiments/peers/floor.sh,
// docs/peers.md).
func BenchmarkUnaryRPC(b *testing.B) {
	target := benchServer(b)
	// As rpclab's own run context: cancellable, with no deadline (one would
	// add grpc-go's timeout header and the server's timer to run-ctx).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	phase.Store(phaseMeasure)

	// Each path opens conn's layout for n in-flight RPCs and makes the
	// per-goroutine state of each; done closes what it opened.
	paths := []struct {
		name string
		open func(b *testing.B, conn ConnKind, n int) (calls []func(), done func())
	}{
		{"grpc-client", func(b *testing.B, conn ConnKind, n int) ([]func(), func()) {
			var ccs []*grpc.ClientConn
			calls := make([]func(), n)
			for i := range calls {
				if i == 0 || conn == PerWorker {
					cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
					if err != nil {
						b.Fatal(err)
					}
					ccs = append(ccs, cc)
				}
				client := pb.NewBenchmarkServiceClient(ccs[len(ccs)-1])
				// The client's request at -req 0 -resp 0 (its payload type,
				// COMPRESSABLE, is the zero value): the same bytes as the worker's.
				req := &pb.SimpleRequest{ResponseType: pb.PayloadType_COMPRESSABLE,
					Payload: &pb.Payload{Type: pb.PayloadType_COMPRESSABLE, Body: make([]byte, 0)}}
				hist := gstats.NewHistogram(gstats.HistogramOptions{NumBuckets: 2495, GrowthFactor: .01})
				calls[i] = func() {
					start := time.Now()
					if _, err := client.UnaryCall(context.Background(), req); err != nil {
						b.Error(err)
					}
					_ = hist.Add(time.Since(start).Nanoseconds())
				}
			}
			return calls, func() {
				for _, cc := range ccs {
					_ = cc.Close()
				}
			}
		}},
		{"worker", workerPath(ctx, target, runCtx, callContext(runCtx), &phase)},
		{"run-ctx", workerPath(ctx, target, runCtx, runCtx, &phase)},
	}
	for _, p := range paths {
		for _, conn := range []ConnKind{Shared, PerWorker} {
			for _, n := range []int{1, 8, 32, 64} {
				b.Run(fmt.Sprintf("path=%s/conn=%s/inflight=%d", p.name, conn, n), func(b *testing.B) {
					calls, done := p.open(b, conn, n)
					defer done()
					for _, call := range calls {
						call() // warm: the first call on a connection sets it up
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
}

// benchServer is -loadgen.target, or else a server in this process that
// stops when b ends.
func benchServer(b *testing.B) string {
	if *benchTarget != "" {
		return *benchTarget
	}
	return testutil.Serve(b, server.New(server.Options{}))
}

// workerPath opens a step's frame for conn and n as runClosed does, and n
// closed-loop workers on it whose calls go under calls; worker i uses
// conns[i%len(conns)], as in runClosed.
func workerPath(ctx context.Context, target string, runCtx, calls context.Context, phase *atomic.Int32) func(b *testing.B, conn ConnKind, n int) ([]func(), func()) {
	return func(b *testing.B, conn ConnKind, n int) ([]func(), func()) {
		f, cause, err := openFrame(ctx, shortSpec(target), Step{Conn: ConnMode{Kind: conn}, RPC: Unary, Inflight: n}, Options{})
		if err != nil || cause != nil {
			b.Fatalf("openFrame: %v %v", err, cause)
		}
		fns := make([]func(), n)
		run := &closedRun{ctx: runCtx, calls: calls, phase: phase}
		w := PingWorkload(Benchmark, Unary, 0)
		for i := range fns {
			cl, rec, cc := w.NewCaller(), stats.NewRecorder(), f.conns[i%len(f.conns)]
			fns[i] = func() {
				if !run.once(cl, rec, cc, phaseMeasure, nil) {
					b.Error("the run ended")
				}
			}
		}
		return fns, f.close
	}
}
