// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/worker"
	"github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// markCounter counts the marks a worker has answered: a driver's mark is
// answered once the worker has taken its figures (and, for the first
// mark of a step, reset them), so a test that waits for answered marks
// knows the step's interval has begun on that worker, without a sleep.
type markCounter struct {
	pending, answered atomic.Int64
}

func (m *markCounter) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &markStream{ServerStream: ss, m: m})
}

type markStream struct {
	grpc.ServerStream
	m *markCounter
}

func (s *markStream) RecvMsg(msg any) error {
	err := s.ServerStream.RecvMsg(msg)
	if a, ok := msg.(*benchpb.ClientArgs); ok && err == nil && a.GetMark() != nil {
		s.m.pending.Add(1)
	}
	return err
}

func (s *markStream) SendMsg(msg any) error {
	err := s.ServerStream.SendMsg(msg)
	if _, ok := msg.(*benchpb.ClientStatus); ok && err == nil && s.m.pending.Load() > 0 {
		s.m.pending.Add(-1)
		s.m.answered.Add(1)
	}
	return err
}

// markedWorker serves an rpclab worker in this process until the test
// ends, counting the marks it answered.
func markedWorker(t *testing.T) (addr string, marks *markCounter) {
	t.Helper()
	w, err := worker.New(worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	marks = &markCounter{}
	s := grpc.NewServer(grpc.StreamInterceptor(marks.intercept))
	benchpb.RegisterWorkerServiceServer(s, w)
	workerpb.RegisterWorkerDetailServer(s, w)
	return testutil.Serve(t, s), marks
}

// countingTarget serves rpclab's ping until the test ends, counting the
// RPCs it received.
func countingTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		n.Add(1)
		return h(ctx, req)
	}
	return testutil.Serve(t, server.New(server.Options{}, grpc.ChainUnaryInterceptor(count))), &n
}

// waitFor polls cond until it holds or ctx ends (then the test fails,
// saying what it waited for): for conditions no event signals.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
