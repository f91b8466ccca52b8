// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/ydbpb"
)

// serveDelayed serves rpclab's services with o on loopback and returns a
// connection to them.
func serveDelayed(t *testing.T, o server.Options) *grpc.ClientConn {
	t.Helper()
	addr := testutil.Serve(t, server.New(o))
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// TestDelayWithStreamLimit: with one stream per connection and a think time
// D, n concurrent calls on one connection run one after another, so they
// take at least n*D (a timer never fires early: a lower bound, not a
// timing guess).
func TestDelayWithStreamLimit(t *testing.T) {
	const d, n = 20 * time.Millisecond, 5
	ctx := testutil.Context(t)
	c := pb.NewBenchmarkServiceClient(serveDelayed(t, server.Options{Delay: d, MaxConcurrentStreams: 1}))
	if _, err := c.UnaryCall(ctx, &pb.SimpleRequest{}); err != nil { // connect first
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.UnaryCall(ctx, &pb.SimpleRequest{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := time.Since(start); got < n*d {
		t.Errorf("%d calls on one connection allowing one stream took %v, want at least %v (the think time serialised)", n, got, n*d)
	}
}

// TestDelayEveryService: the think time holds the streaming ping and YDB's
// DebugService too, and a caller's deadline shorter than it ends the call
// with DeadlineExceeded.
func TestDelayEveryService(t *testing.T) {
	const d = 30 * time.Millisecond
	ctx := testutil.Context(t)
	cc := serveDelayed(t, server.Options{Delay: d})
	start := time.Now()
	stream, err := pb.NewBenchmarkServiceClient(cc).StreamingCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := stream.Send(&pb.SimpleRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if got := time.Since(start); got < 2*d {
		t.Errorf("two ping-pongs took %v, want at least %v", got, 2*d)
	}
	start = time.Now()
	if _, err := ydbpb.NewDebugServiceClient(cc).PingPlainGrpc(ctx, &ydbpb.PlainGrpcRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < d {
		t.Errorf("YDB's ping took %v, want at least %v", got, d)
	}
	short, cancel := context.WithTimeout(ctx, d/10)
	defer cancel()
	_, err = pb.NewBenchmarkServiceClient(cc).UnaryCall(short, &pb.SimpleRequest{})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("a call whose deadline is shorter than the think time ended with %v, want DeadlineExceeded", err)
	}
}
