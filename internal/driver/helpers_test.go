// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/worker"
)

// startPing serves rpclab's ping on a free loopback port and counts the
// unary calls it answered.
func startPing(t *testing.T) (string, *atomic.Int64) { return testserver.CountingPing(t) }

func serve(t *testing.T, s *grpc.Server) string { return testutil.Serve(t, s) }

// startWorker serves an rpclab worker on a free loopback port until the
// test ends and returns its address and the channel Serve's result
// arrives on.
func startWorker(t *testing.T) (string, <-chan error) {
	t.Helper()
	addr, done, _ := startKillableWorker(t)
	return addr, done
}

// startKillableWorker is startWorker with a function that stops the
// worker at once, as if its process died (its streams break).
func startKillableWorker(t *testing.T) (string, <-chan error, func()) {
	t.Helper()
	addr, done, _, kill := startWatchedWorker(t)
	return addr, done, kill
}

// startWatchedWorker is startKillableWorker with the worker's Marks.
func startWatchedWorker(t *testing.T) (string, <-chan error, func() int64, func()) {
	t.Helper()
	w, err := worker.New(worker.Options{ServerHost: "127.0.0.1", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() { done <- w.Serve(ctx, lis); close(finished) }()
	t.Cleanup(func() { cancel(); <-finished })
	return lis.Addr().String(), done, w.Marks, func() { cancel(); <-finished }
}

// waitUntil polls cond (no event says when it holds) until it does or ctx
// ends; it reports whether cond held.
func waitUntil(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

func dial(t *testing.T, ctx context.Context, addr string) *Remote {
	t.Helper()
	r, err := Dial(ctx, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// waitServed waits until the server answered at least n calls.
func waitServed(t *testing.T, ctx context.Context, served *atomic.Int64, n int64) {
	t.Helper()
	for served.Load() < n {
		select {
		case <-ctx.Done():
			t.Fatalf("the server answered %d calls before the test timeout, want %d", served.Load(), n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func closedAddr(t *testing.T) string { return testutil.ClosedAddr(t) }
