// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// benchParallel and benchConns are the grid: goroutines calling at
// once, and the connections a pool holds.
var (
	benchParallel = []int{8, 64, 256}
	benchConns    = []int{2, 4}
)

// BenchmarkPools makes unary pings through each peer from exactly parallel
// goroutines, against a real rpclab server (see benchTarget). Every worker
// is made and warmed up (one call) before the timer starts, so dialling is
// not measured. Metrics: rpc/s, ns/op (wall time per call across all
// goroutines), allocs/op with -benchmem.
func BenchmarkPools(b *testing.B) {
	target := benchTarget(b)
	for _, conns := range benchConns {
		for _, par := range benchParallel {
			for _, p := range All() {
				b.Run(fmt.Sprintf("conns=%d/parallel=%d/peer=%s", conns, par, p.Name), func(b *testing.B) {
					runPeer(b, p, target, conns, par, false)
				})
			}
		}
	}
}

// BenchmarkPick measures the pick (borrow and return) alone, without an
// RPC, for the peers that expose one.
func BenchmarkPick(b *testing.B) {
	target := benchTarget(b)
	for _, conns := range benchConns {
		for _, par := range benchParallel {
			for _, p := range All() {
				b.Run(fmt.Sprintf("conns=%d/parallel=%d/peer=%s", conns, par, p.Name), func(b *testing.B) {
					runPeer(b, p, target, conns, par, true)
				})
			}
		}
	}
}

func runPeer(b *testing.B, p Peer, target string, conns, par int, pickOnly bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := p.Open(ctx, target, conns)
	if err != nil {
		b.Fatalf("open: %v", err)
	}
	defer func() { _ = c.Close() }()
	procs := runtime.GOMAXPROCS(0)
	perProc := (par + procs - 1) / procs
	n := perProc * procs
	workers := make([]Worker, n)
	req := &pb.SimpleRequest{Payload: &pb.Payload{}}
	for i := range workers {
		if workers[i], err = c.NewWorker(); err != nil {
			b.Fatalf("worker: %v", err)
		}
		if err := workers[i].Call(ctx, req, &pb.SimpleResponse{}); err != nil {
			b.Fatalf("warm-up call: %v", err)
		}
	}
	if pickOnly {
		if err := workers[0].Pick(ctx); errors.Is(err, ErrNoPick) {
			b.Skip(err)
		}
	}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	b.SetParallelism(perProc)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb2 *testing.PB) {
		w := workers[next.Add(1)-1]
		resp := &pb.SimpleResponse{}
		for pb2.Next() {
			var err error
			if pickOnly {
				err = w.Pick(ctx)
			} else {
				err = w.Call(ctx, req, resp)
			}
			if err != nil {
				failed.CompareAndSwap(nil, &err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatalf("call: %v", *err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rpc/s")
	b.ReportMetric(float64(n), "goroutines")
}
