// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// GateServer is a ping server (UnaryCall) that answers each call once its
// gate is open: a test that never opens it has a server that holds every
// RPC with no reply (a process stopped with SIGSTOP, a server
// deadlocked), and one that opens it at once has a healthy server.
type GateServer struct {
	pb.UnimplementedBenchmarkServiceServer
	gate chan struct{}
	once sync.Once
}

// NewGateServer is a GateServer with its gate shut.
func NewGateServer() *GateServer { return &GateServer{gate: make(chan struct{})} }

// UnaryCall replies once the gate is open, or fails when ctx ends.
func (g *GateServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	select {
	case <-g.gate:
		return &pb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Open opens the gate: held calls and every later one are answered.
func (g *GateServer) Open() { g.once.Do(func() { close(g.gate) }) }

// ServeGate serves a GateServer on loopback until the test ends, its gate
// shut when held (open otherwise), and returns its address. The gate
// opens when the test ends, before the server stops.
func ServeGate(t testing.TB, held bool) string {
	t.Helper()
	g := NewGateServer()
	if !held {
		g.Open()
	}
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, g)
	target := Serve(t, s)
	t.Cleanup(g.Open) // before the server's Stop (cleanups run last first)
	return target
}
