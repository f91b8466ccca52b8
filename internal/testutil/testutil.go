// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package testutil holds what rpclab's tests would otherwise each write
// again: a context bounded for a test, real servers on loopback (Serve,
// a ping server that holds its replies, GateServer), and a listener that
// fails as a process out of file descriptors does (FailFirstAccept). It
// imports only grpc-go and the generated protos, so the test of any
// package may use it, in-package tests included.
package testutil

import (
	"context"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout bounds the context of a test (Context), and any other
// wait of a test that needs the duration itself (a connection's deadline).
const DefaultTimeout = 30 * time.Second

// LongTimeout bounds a test whose work is long by design (LongContext): a
// race-built worker or server process it starts, downloads of many
// megabytes, a real gRPC stack of another language, on a busy 2-core
// machine.
const LongTimeout = 3 * time.Minute

// Context is a context that ends with the test, or after DefaultTimeout.
func Context(t testing.TB) context.Context {
	t.Helper()
	return contextWithin(t, DefaultTimeout)
}

// LongContext is a context that ends with the test, or after LongTimeout.
func LongContext(t testing.TB) context.Context {
	t.Helper()
	return contextWithin(t, LongTimeout)
}

func contextWithin(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Listen listens on a free loopback port; the test fails if it cannot.
// Whoever serves on it closes it.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// Serve serves s on a free loopback port until the test ends (then it
// stops s and waits for Serve to return) and returns its address.
func Serve(t testing.TB, s *grpc.Server) string {
	t.Helper()
	lis := Listen(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return lis.Addr().String()
}

// FailFirstAccept wraps l so that its first Accept fails as a process out
// of file descriptors does (EMFILE); later ones accept.
func FailFirstAccept(l net.Listener) net.Listener { return &failOnce{Listener: l} }

type failOnce struct {
	net.Listener
	failed atomic.Bool
}

func (f *failOnce) Accept() (net.Conn, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return f.Listener.Accept()
}

// ClosedAddr is a loopback address where nothing listens: a dial to it is
// refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	lis := Listen(t)
	addr := lis.Addr().String()
	lis.Close()
	return addr
}
