// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
)

// ExampleSweep sweeps two connection layouts at two in-flight counts
// against rpclab's ping server on loopback, closed loop: each step dials
// fresh connections, warms up, measures, and hands its record to the sink
// as it ends. The figures that do not depend on the machine are printed:
// the step, its status, and the connections the operating system saw.
func ExampleSweep() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := server.New(server.Options{})
	go srv.Serve(lis)
	defer srv.Stop()

	spec := &loadgen.Spec{
		Target:      lis.Addr().String(),
		Conns:       []loadgen.ConnMode{{Kind: loadgen.Shared}, {Kind: loadgen.PerWorker}},
		RPCs:        []string{loadgen.Unary},
		Inflight:    []int{1, 4},
		Warmup:      50 * time.Millisecond,
		Interval:    200 * time.Millisecond,
		DialTimeout: 5 * time.Second,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink := func(rec *result.Record) error {
		fmt.Printf("%s %s inflight=%d: %s, %d connections, some requests: %v\n",
			rec.Spec.ConnMode, rec.Spec.RPC, rec.Spec.Inflight, rec.Status, rec.ConnsObserved, rec.Requests > 0)
		return nil
	}
	if err := loadgen.Sweep(ctx, spec, loadgen.Options{}, sink, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// shared unary inflight=1: ok, 1 connections, some requests: true
	// shared unary inflight=4: ok, 1 connections, some requests: true
	// per-worker unary inflight=1: ok, 1 connections, some requests: true
	// per-worker unary inflight=4: ok, 4 connections, some requests: true
}
