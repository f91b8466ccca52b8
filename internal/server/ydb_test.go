// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/proto/ydbpb"

	"github.com/rpclab/rpclab/internal/testutil"
)

// startServe runs server.Serve (what rpclab serve runs) on loopback and
// returns a YDB DebugService client to it.
func startServe(ctx context.Context, t *testing.T) ydbpb.DebugServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Serve(sctx, lis, server.Options{}) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return ydbpb.NewDebugServiceClient(cc)
}

// inWindow reports whether ts (µs since the epoch) lies between before and
// after, the client's clock read around the call (same host, same clock).
func inWindow(ts uint64, before, after time.Time) bool {
	return ts >= uint64(before.UnixMicro()) && ts <= uint64(after.UnixMicro())
}

// TestDebugPingPlainGrpc: the unary ping is answered with the server's time.
func TestDebugPingPlainGrpc(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	c := startServe(ctx, t)
	for i := 0; i < 3; i++ {
		before := time.Now()
		resp, err := c.PingPlainGrpc(ctx, &ydbpb.PlainGrpcRequest{})
		after := time.Now()
		if err != nil {
			t.Fatalf("PingPlainGrpc: %v", err)
		}
		if got := resp.GetCallBackTs(); !inWindow(got, before, after) {
			t.Errorf("CallBackTs = %d, want the server's time in µs, within [%d, %d]", got, before.UnixMicro(), after.UnixMicro())
		}
	}
}

// TestDebugPingStream: every request on the stream gets exactly one reply
// carrying the server's time, and a half-close ends the stream with OK.
func TestDebugPingStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	c := startServe(ctx, t)
	s, err := c.PingStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := 0; i < 5; i++ {
		before := time.Now()
		if err := s.Send(&ydbpb.PlainGrpcRequest{}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		resp, err := s.Recv()
		after := time.Now()
		if err != nil {
			t.Fatalf("recv %d: %v", i, err)
		}
		got := resp.GetCallBackTs()
		if !inWindow(got, before, after) {
			t.Errorf("reply %d: CallBackTs = %d, want within [%d, %d]", i, got, before.UnixMicro(), after.UnixMicro())
		}
		if got < last {
			t.Errorf("reply %d: CallBackTs = %d went back from %d", i, got, last)
		}
		last = got
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	// One reply per request: nothing more arrives, the stream ends with OK.
	if resp, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after CloseSend: got (%v, %v), want io.EOF", resp, err)
	}
}
