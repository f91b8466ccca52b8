// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/server"
	"github.com/rpclab/rpclab/stats"
)

// BenchmarkUnaryRPC compares the generated stub (a new response per call)
// with the worker's path (reused request and response, recorded into a
// per-worker histogram) on one connection to a real loopback server. The
// difference in allocs/op is what the load generator saves per RPC.
func BenchmarkUnaryRPC(b *testing.B) {
	s := server.New(server.Options{})
	lis := listen(b)
	go s.Serve(lis)
	defer s.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req := &pb.SimpleRequest{Payload: &pb.Payload{}}

	b.Run("path=stub", func(b *testing.B) {
		c := pb.NewBenchmarkServiceClient(cc)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.UnaryCall(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=worker", func(b *testing.B) {
		rec := stats.NewRecorder()
		resp := &pb.SimpleResponse{}
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			err := cc.Invoke(ctx, unaryMethod, req, resp)
			rec.Record(time.Since(t0), codes.OK)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
