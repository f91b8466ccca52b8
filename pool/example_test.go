// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

// A generated client takes the pool where it took a *grpc.ClientConn: the
// change from one connection is pool.New in place of grpc.NewClient.
func Example() {
	// A real server on a loopback port.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	srv := pooltest.NewServer(nil)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	// Was: cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(...))
	p, err := pool.New(lis.Addr().String(),
		pool.WithSize(4),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Println("pool:", err)
		return
	}
	defer p.Close()
	client := pb.NewBenchmarkServiceClient(p) // was: pb.NewBenchmarkServiceClient(cc)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Connect(ctx); err != nil { // optional: wait until every connection is up
		fmt.Println("connect:", err)
		return
	}
	for i := 0; i < 8; i++ {
		resp, err := client.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 5})
		if err != nil {
			fmt.Println("rpc:", err)
			return
		}
		if i == 0 {
			fmt.Println("response bytes:", len(resp.GetPayload().GetBody()))
		}
	}
	st := p.Stats()
	fmt.Printf("connections: %d, ready: %d, in flight: %d, policy: %v\n", len(st.Conns), st.Ready(), st.InFlight(), st.Policy)
	// Output:
	// response bytes: 5
	// connections: 4, ready: 4, in flight: 0, policy: round-robin
}

// LeastLoaded sends each RPC to the less busy of two random connections,
// so a connection whose server side stalls stops receiving RPCs.
func ExampleWithPolicy() {
	p, err := pool.New("dns:///backend.example:443",
		pool.WithPolicy(pool.LeastLoaded),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())),
		pool.WithLazy()) // dial on the first RPC, not now
	if err != nil {
		fmt.Println("pool:", err)
		return
	}
	defer p.Close()
	// Without WithSize: one connection per usable CPU, 2 at least, 8 at most.
	cpus := runtime.GOMAXPROCS(0)
	fmt.Println(p.Size() == min(max(cpus, 2), 8), p.Stats().Policy)
	// Output: true least-loaded
}

// An adaptive pool starts with min connections and sizes itself up to max:
// it adds one only when RPCs wait to be written, keeps it only on a
// measured gain, and gives connections back once the RPCs in flight would
// fit one connection fewer. Stats().Events says why it has the connections it has.
func ExampleWithAdaptive() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	srv := pooltest.NewServer(nil)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	p, err := pool.New(lis.Addr().String(),
		pool.WithAdaptive(1, 4),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Println("pool:", err)
		return
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := pb.NewBenchmarkServiceClient(p)
	for i := 0; i < 8; i++ { // one RPC at a time: no connection is the limit
		if _, err := client.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 5}); err != nil {
			fmt.Println("rpc:", err)
			return
		}
	}
	st := p.Stats()
	fmt.Printf("connections: %d (adaptive %v, %d..%d)\n", len(st.Conns), st.Adaptive, st.Min, st.Max)
	// st.Events lists each decision: its time, the size from and to, its
	// reason in words and what the interval it was taken on measured.
	// Output: connections: 1 (adaptive true, 1..4)
}

// Shutdown gives RPCs in flight a drain of your choosing, as
// net/http's Server.Shutdown does; Close drains for 5 seconds.
func ExamplePool_Shutdown() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	srv := pooltest.NewServer(nil)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	p, err := pool.New(lis.Addr().String(),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Println("pool:", err)
		return
	}

	// At the end of the program: new RPCs fail with pool.ErrClosed at
	// once, those in flight may finish for 10 seconds, then the rest are
	// cancelled (code Canceled) and the connections closed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("shutdown:", p.Shutdown(ctx))
	fmt.Println("again:", p.Shutdown(ctx))
	// Output:
	// shutdown: <nil>
	// again: rpc error: code = Canceled desc = pool: closed
}
