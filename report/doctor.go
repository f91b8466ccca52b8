// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

// DoctorText prints rpclab doctor's verdict: each layout's best step,
// whether the client's connection layout is the bottleneck, and if so the
// pool size to use and the code change that brings it in. capped says a
// rate or in-flight cap stopped a layout before its throughput stopped
// growing.
func DoctorText(w io.Writer, d *verdict.Diagnosis, capped bool) {
	line := func(name string, r *result.Record) {
		if r == nil {
			fmt.Fprintf(w, "  %-14s no successful step\n", name)
			return
		}
		fmt.Fprintf(w, "  %-14s best %8.0f req/s at in-flight %-3d  p99 %7s µs  client CPU %6.1f µs/RPC\n",
			name, r.ThroughputRPS, r.Spec.Inflight, us(r.Latency.P99NS), r.ClientCPUNSPerRPC/1e3)
	}
	fmt.Fprintln(w, "Best throughput per connection layout (closed loop):")
	line(d.Shared.Conn, d.Shared.Best)
	for i := range d.Pools {
		line(d.Pools[i].Conn, d.Pools[i].Best)
	}
	fmt.Fprintln(w)
	if d.Busy != nil {
		fmt.Fprintf(w, "Verdict: busy host. %s\nWhat the study read from these figures, for what it is worth:\n", d.Busy.Text())
	}
	switch {
	case d.Kind == verdict.ConnBottleneck && d.Recommended != nil && d.Recommended.Best.Spec.ConnMode == verdict.AutoPoolMode:
		b := d.Recommended.Best
		fmt.Fprintf(w, "Verdict: the client's single shared connection IS the bottleneck: the best pool reached %.2fx its throughput.\n", d.Gain)
		fmt.Fprintf(w, "Use the adaptive pool (%.0f vs %.0f req/s): it matched the best fixed pool (%.0f%% of its throughput, at most %.1fx the CPU per RPC)\n",
			b.ThroughputRPS, d.Shared.Best.ThroughputRPS, 100*verdict.EnoughOfBest, verdict.AutoCPUSlack)
		fmt.Fprintln(w, "and sizes itself to the load, where a fixed size fits one load only.")
		fmt.Fprintln(w, "The change (github.com/rpclab/rpclab/pool; a *pool.Pool is a grpc.ClientConnInterface):")
		fmt.Fprintf(w, "    p, err := pool.New(target, pool.WithAdaptive(%d, %d), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)\n", b.Spec.ConnsMin, b.Spec.ConnsRequested)
		fmt.Fprintln(w, "    defer p.Close()")
		fmt.Fprintln(w, "    client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)")
	case d.Kind == verdict.ConnBottleneck && d.Recommended != nil:
		n := verdict.Conns(d.Recommended.Best)
		fmt.Fprintf(w, "Verdict: the client's single shared connection IS the bottleneck: the best pool reached %.2fx its throughput.\n", d.Gain)
		fmt.Fprintf(w, "Use a pool of %d connections (%.0f vs %.0f req/s): the fewest connections reaching %.0f%% of the best pool's throughput.\n",
			n, d.Recommended.Best.ThroughputRPS, d.Shared.Best.ThroughputRPS, 100*verdict.EnoughOfBest)
		fmt.Fprintln(w, "The change (github.com/rpclab/rpclab/pool; a *pool.Pool is a grpc.ClientConnInterface):")
		fmt.Fprintf(w, "    p, err := pool.New(target, pool.WithSize(%d), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)\n", n)
		fmt.Fprintln(w, "    defer p.Close()")
		fmt.Fprintln(w, "    client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)")
	case d.Kind == verdict.NotConnection:
		fmt.Fprintf(w, "Verdict: the client's connection layout is NOT the bottleneck: the best pool reached %.2fx the shared connection's\n", d.Gain)
		fmt.Fprintf(w, "throughput (below %.1fx). Look at the server or the network; one shared connection is enough.\n", verdict.BottleneckRatio)
	default:
		fmt.Fprintf(w, "Verdict: inconclusive: %s.\n", d.Why)
	}
	if capped {
		fmt.Fprintln(w, "Note: the --max-rps or --max-inflight cap stopped a layout before its throughput stopped growing;")
		fmt.Fprintln(w, "raise the caps for a firmer answer.")
	}
}
