// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"

	"github.com/rpclab/rpclab/doctor"
	"github.com/rpclab/rpclab/result"
)

// DoctorText prints rpclab doctor's verdict: each layout's best step,
// whether the client's connection layout is the bottleneck, and if so the
// pool size to use and the code change that brings it in.
func DoctorText(w io.Writer, d *doctor.Diagnosis) {
	line := func(name string, r *result.Record) {
		if r == nil {
			fmt.Fprintf(w, "  %-8s no successful step\n", name)
			return
		}
		fmt.Fprintf(w, "  %-8s best %8.0f req/s at in-flight %-3d  p99 %7s µs  client CPU %6.1f µs/RPC\n",
			name, r.ThroughputRPS, r.Spec.Inflight, us(r.Latency.P99NS), r.ClientCPUNSPerRPC/1e3)
	}
	fmt.Fprintln(w, "Best throughput per connection layout (closed loop):")
	line("shared", d.Shared.Best)
	for i := range d.Pools {
		line(d.Pools[i].Conn.String(), d.Pools[i].Best)
	}
	fmt.Fprintln(w)
	switch {
	case d.Shared.Best == nil:
		fmt.Fprintln(w, "Verdict: no step on the shared connection succeeded, so nothing can be compared.")
	case d.Bottleneck && d.Recommended != nil:
		n := d.Recommended.Conn.N
		fmt.Fprintf(w, "Verdict: the client's single shared connection IS the bottleneck: a pool of %d connections reached %.2fx its throughput\n", n, d.Gain)
		fmt.Fprintf(w, "(%.0f vs %.0f req/s) at the lowest client CPU per RPC among the pools within 10%% of the best.\n", d.Recommended.Best.ThroughputRPS, d.Shared.Best.ThroughputRPS)
		fmt.Fprintln(w, "The change (github.com/rpclab/rpclab/pool; a *pool.Pool is a grpc.ClientConnInterface):")
		fmt.Fprintf(w, "    p, err := pool.New(target, pool.WithSize(%d), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)\n", n)
		fmt.Fprintln(w, "    defer p.Close()")
		fmt.Fprintln(w, "    client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)")
	default:
		fmt.Fprintf(w, "Verdict: the client's connection layout is NOT the bottleneck: the best pool reached %.2fx the shared connection's\n", d.Gain)
		fmt.Fprintf(w, "throughput (below %.1fx). Look at the server or the network; one shared connection is enough.\n", doctor.BottleneckGain)
	}
	if d.Capped {
		fmt.Fprintln(w, "Note: the --max-rps or --max-inflight cap stopped a layout before its throughput stopped growing;")
		fmt.Fprintln(w, "raise the caps for a firmer answer.")
	}
}
