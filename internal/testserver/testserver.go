// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package testserver runs rpclab's own server for tests: in this process
// (CountingPing, a ping server that counts the calls it answered), or as a
// child process (Child: the test binary doubles as the ping and bulk
// server, started the way rpclab starts "rpclab serve"). It is apart from
// internal/testutil because it imports server, so the tests of server's
// own imports (sidechannel, bulkcodec) could not use it.
package testserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

// CountingPing serves rpclab's ping on a free loopback port until the
// test ends and counts the unary calls it answered.
func CountingPing(t testing.TB) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		n.Add(1)
		return resp, err
	}
	return testutil.Serve(t, server.New(server.Options{}, grpc.UnaryInterceptor(count))), &n
}

// Child serves the ping and bulk services on a free loopback port,
// printing server.ListeningPrefix and the address first as "rpclab serve"
// does, until SIGTERM or an interrupt. It returns the process's exit code
// (1 with the error on stderr if it could not serve). Call it from
// TestMain when the variable that marks the child is set.
func Child() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func serve(ctx context.Context) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	b, err := server.StartBulk(ctx, "127.0.0.1")
	if err != nil {
		lis.Close()
		return err
	}
	defer b.Close()
	fmt.Printf("%s%s\n", server.ListeningPrefix, lis.Addr())
	return server.Serve(ctx, lis, server.Options{Bulk: b})
}
