// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testserver_test

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// TestCountingPing: the server counts each unary call it answered.
func TestCountingPing(t *testing.T) {
	addr, n := testserver.CountingPing(t)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := pb.NewBenchmarkServiceClient(cc)
	for i := 1; i <= 3; i++ {
		if _, err := c.UnaryCall(testutil.Context(t), &pb.SimpleRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != int64(i) {
			t.Errorf("got %d calls counted, want %d", got, i)
		}
	}
}
