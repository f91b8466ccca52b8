// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

// DoctorText prints rpclab doctor's verdict: each layout's best step,
// whether the client's connection layout is the bottleneck, and if so the
// pool size to use and the code change that brings it in, in the stack of
// the client that ran the study (its records' env.language; PoolChange).
// capped says a
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
		fmt.Fprintf(w, "The change (%s; %s):\n", verdict.PoolLibrary("go"), poolChanges["go"].takes)
		fmt.Fprintf(w, "    p, err := pool.New(target, pool.WithAdaptive(%d, %d), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)\n", b.Spec.ConnsMin, b.Spec.ConnsRequested)
		fmt.Fprintln(w, "    defer p.Close()")
		fmt.Fprintln(w, "    client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)")
	case d.Kind == verdict.ConnBottleneck && d.Recommended != nil:
		n := verdict.Conns(d.Recommended.Best)
		fmt.Fprintf(w, "Verdict: the client's single shared connection IS the bottleneck: the best pool reached %.2fx its throughput.\n", d.Gain)
		fmt.Fprintf(w, "Use a pool of %d connections (%.0f vs %.0f req/s): the fewest connections reaching %.0f%% of the best pool's throughput.\n",
			n, d.Recommended.Best.ThroughputRPS, d.Shared.Best.ThroughputRPS, 100*verdict.EnoughOfBest)
		PoolChange(w, d.Recommended.Best.Env.Language, n)
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

// poolChange is one stack's code change to a pool of N connections, as its
// pool library's README gives it ("the three-line change").
type poolChange struct {
	// takes says why the stack's stubs take the library
	// (verdict.PoolLibrary names it).
	takes string
	// lines are the change, {N} standing for the pool's size.
	lines []string
	// readme is the library's README, for its settings ("" for Go's
	// package pool, documented by go doc).
	readme string
}

// poolChanges are the change in each client language's stack (result's
// env.language), from package pool and clients/<lang>/pool/README.md.
var poolChanges = map[string]poolChange{
	"go": {takes: "a *pool.Pool is a grpc.ClientConnInterface", lines: []string{
		"p, err := pool.New(target, pool.WithSize({N}), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)",
		"defer p.Close()",
		"client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)",
	}},
	"java": {takes: "a ChannelPool is a ManagedChannel a generated stub takes", lines: []string{
		"ChannelPool ch = ChannelPool.forTarget(target, creds).size({N}).build(); // was: ManagedChannel ch = Grpc.newChannelBuilder(target, creds).build();",
		"YourServiceGrpc.YourServiceBlockingStub stub = YourServiceGrpc.newBlockingStub(ch); // unchanged",
		"ch.shutdown(); ch.awaitTermination(5, TimeUnit.SECONDS); // unchanged: over all {N} channels",
	}, readme: "clients/java/pool/README.md"},
	"rust": {takes: "a Pool is a tonic GrpcService a generated client takes", lines: []string{
		"let ep = Endpoint::from_shared(uri)?.connect_timeout(Duration::from_secs(5)); // was: let ch = Endpoint::from_shared(uri)?.connect().await?;",
		"let pool = rpclab_pool::Pool::connect(ep, {N}, rpclab_pool::Policy::RoundRobin).await?;",
		"let mut client = YourServiceClient::new(pool); // was: YourServiceClient::new(ch)",
	}, readme: "clients/rust/pool/README.md"},
	"cpp": {takes: "#include \"channel_pool.h\"", lines: []string{
		"rpclab::ChannelPool pool(target, {N}, rpclab::Pick::kRoundRobin); // was: auto channel = grpc::CreateChannel(target, creds);",
		"auto lease = pool.Acquire(); // per call: counts it in flight on its channel until destroyed",
		"auto stub = YourService::NewStub(lease.channel()); // was: YourService::NewStub(channel)",
	}, readme: "clients/cpp/pool/README.md"},
	"python": {takes: "a ChannelPool is a grpc.Channel a generated stub takes", lines: []string{
		"import rpclab_pool",
		"channel = rpclab_pool.ChannelPool(target, {N})  # was: grpc.insecure_channel(target)",
		"stub = YourServiceStub(channel)  # unchanged",
	}, readme: "clients/python/pool/README.md"},
	"node": {takes: "plugged in through channelOverride", lines: []string{
		"const { ChannelPool } = require('@rpclab/grpc-pool');",
		"const pool = new ChannelPool(target, grpc.credentials.createInsecure(), { size: {N} });",
		"const client = new YourServiceClient(target, grpc.credentials.createInsecure(), { channelOverride: pool }); // was: without channelOverride",
	}, readme: "clients/node/pool/README.md"},
}

// PoolChange prints the code change that brings in a pool of n connections
// in the stack of client language lang (a record's env.language; "" is
// Go), with a pointer to its library's README for the other settings. A
// language without a pool library gets a pointer to rpclab's pools.
func PoolChange(w io.Writer, lang string, n int) {
	if lang == "" {
		lang = "go"
	}
	c, ok := poolChanges[lang]
	if !ok {
		fmt.Fprintf(w, "The %s client has no pool library in rpclab; clients/*/pool hold those of C++, Java, Rust, Python and Node.\n", lang)
		return
	}
	fmt.Fprintf(w, "The change (%s; %s):\n", verdict.PoolLibrary(lang), c.takes)
	for _, l := range c.lines {
		fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(l, "{N}", strconv.Itoa(n)))
	}
	if c.readme != "" {
		fmt.Fprintf(w, "Other settings (credentials, channel options, the least-loaded policy): %s.\n", c.readme)
	}
}
