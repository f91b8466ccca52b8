// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// DoctorText prints rpclab doctor's outcome: each layout's best step,
// then the verdict on recs, word for word what rpclab sweep and rpclab
// report print for the same records (verdict.Verdicts, verdict.Text),
// then what only the study adds: for a connection bottleneck the code
// change that brings in the advised layout, in the stack of the client
// that ran the study (the records' env.language; PoolChange), and the
// study's notes (why its climbs ended, what it could not measure).
func DoctorText(w io.Writer, recs []result.Record, notes []string) {
	fmt.Fprintln(w, "Best throughput per connection layout (closed loop):")
	best := map[string]*result.Record{}
	var order []string
	for i := range recs {
		r := &recs[i]
		c := verdict.ConnLabel(r)
		if _, ok := best[c]; !ok {
			order = append(order, c)
			best[c] = nil
		}
		if r.Status == result.StatusOK && (best[c] == nil || r.ThroughputRPS > best[c].ThroughputRPS) {
			best[c] = r
		}
	}
	for _, c := range order {
		r := best[c]
		if r == nil {
			fmt.Fprintf(w, "  %-14s no successful step\n", c)
			continue
		}
		fmt.Fprintf(w, "  %-14s best %8.0f req/s at in-flight %-3d  p99 %7s µs  client CPU %6.1f µs/RPC\n",
			c, r.ThroughputRPS, r.Spec.Inflight, us(r.Latency.P99NS), r.ClientCPUNSPerRPC/1e3)
	}
	vs := verdict.Verdicts(recs)
	fmt.Fprintf(w, "\nVerdict:\n%s\n", verdict.Text(vs))
	for _, v := range vs {
		// On a busy host the rules' reading follows the warning, and so
		// does the change it advises.
		if (v.Kind == verdict.ConnBottleneck || (v.Kind == verdict.BusyHost && v.Rule == verdict.ConnBottleneck)) && v.Conns > 1 {
			change(w, recs, v)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "Note:", n)
	}
}

// change prints the code change that brings in v's advised layout: the
// adaptive pool's, or a fixed pool's in the verdict's stack.
func change(w io.Writer, recs []result.Record, v verdict.Verdict) {
	for i := range recs {
		r := &recs[i]
		if verdict.ConnLabel(r) != v.Enough || r.Spec.ConnMode != verdict.AutoPoolMode {
			continue
		}
		fmt.Fprintf(w, "The change (%s; %s):\n", verdict.PoolLibrary("go"), poolChanges["go"].takes)
		fmt.Fprintf(w, "    p, err := pool.New(target, pool.WithAdaptive(%d, %d), pool.WithDialOptions(opts...)) // was: grpc.NewClient(target, opts...)\n", r.Spec.ConnsMin, r.Spec.ConnsRequested)
		fmt.Fprintln(w, "    defer p.Close()")
		fmt.Fprintln(w, "    client := pb.NewYourServiceClient(p) // was: pb.NewYourServiceClient(cc)")
		return
	}
	PoolChange(w, v.Language, v.Conns)
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
	"cpp": {takes: "#include <rpclab/channel_pool.h>", lines: []string{
		"rpclab::ChannelPool pool(target, {N}, rpclab::Pick::kLeastLoaded, grpc::ChannelArguments(), creds); // was: auto channel = grpc::CreateChannel(target, creds);",
		"auto stub = YourService::NewStub(pool.Next()); // was: YourService::NewStub(channel)",
	}, readme: "clients/cpp/pool/README.md"},
	"python": {takes: "a ChannelPool is a grpc.Channel a generated stub takes", lines: []string{
		"import rpclab_pool",
		"channel = rpclab_pool.ChannelPool(target, {N}, credentials=creds)  # was: grpc.secure_channel(target, creds)",
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
