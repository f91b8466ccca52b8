// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

// drainServer is a grpc-go server on loopback that holds each unary call
// whose metadata "hold" is "release" until release is closed, and each
// whose "hold" is "keep" until the call ends on the client's side. held
// counts the calls it holds.
type drainServer struct {
	addr    string
	held    chan struct{} // one value per call taken into hold
	release chan struct{}
}

func startDrainServer(t *testing.T) *drainServer {
	t.Helper()
	d := &drainServer{held: make(chan struct{}, 16), release: make(chan struct{})}
	ping := &pooltest.Ping{Hold: func(ctx context.Context) {
		md, _ := metadata.FromIncomingContext(ctx)
		hold := md.Get("hold")
		if len(hold) == 0 {
			return
		}
		d.held <- struct{}{}
		switch hold[0] {
		case "release":
			select {
			case <-d.release:
			case <-ctx.Done():
			}
		case "keep":
			<-ctx.Done()
		}
	}}
	d.addr = pooltest.Serve(t, pooltest.NewServer(ping))
	return d
}

// heldCall is a unary call held by the server as hold says; its error
// arrives on the returned channel.
func heldCall(ctx context.Context, p *Pool, hold string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- ping(metadata.AppendToOutgoingContext(ctx, "hold", hold), p) }()
	return done
}

// heldStream opens a bidirectional stream, exchanges one message (the
// stream is then in flight on the server too) and keeps it open until
// release is closed, then half-closes it and reads to its end; with a nil
// release it reads at once, until the stream is ended from outside. Its
// end (nil for status OK) arrives on the returned channel.
func heldStream(ctx context.Context, t *testing.T, p *Pool, release <-chan struct{}) <-chan error {
	t.Helper()
	s, err := pb.NewBenchmarkServiceClient(p).StreamingCall(ctx)
	if err != nil {
		t.Fatalf("StreamingCall: %v", err)
	}
	if err := s.Send(&pb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		if release != nil {
			select {
			case <-release:
				if err := s.CloseSend(); err != nil {
					done <- err
					return
				}
			case <-ctx.Done():
			}
		}
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			err = nil
		}
		done <- err
	}()
	return done
}

// await is the end of a call, or fails t when ctx ends first.
func await(ctx context.Context, t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatalf("%s did not end: %v", what, ctx.Err())
		return nil
	}
}

// refusedDuringDrain checks that new RPCs and Connect fail at once with
// ErrClosed while p drains.
func refusedDuringDrain(ctx context.Context, t *testing.T, p *Pool) {
	t.Helper()
	if err := ping(ctx, p); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke during the drain: got %v, want ErrClosed", err)
	}
	if _, err := p.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/grpc.testing.BenchmarkService/StreamingCall"); !errors.Is(err, ErrClosed) {
		t.Errorf("NewStream during the drain: got %v, want ErrClosed", err)
	}
	if err := p.Connect(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Connect during the drain: got %v, want ErrClosed", err)
	}
}

// TestShutdownDrains: Shutdown refuses new RPCs at once with ErrClosed,
// lets a held unary call and a held stream finish with status OK when
// they are released within the drain, cancels the call and the stream
// still held at its deadline (code Canceled), and returns the deadline's
// error; a second Shutdown or Close returns ErrClosed, and the process's
// goroutines and its connections to the server (as the kernel counts
// them) are back to what they were before the pool.
func TestShutdownDrains(t *testing.T) {
	srv := startDrainServer(t)
	ctx := pooltest.Context(t)
	baseG := runtime.NumGoroutine()
	p, err := New(srv.addr, plaintext, WithSize(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	releaseStream := make(chan struct{})
	unaryOK, unaryKept := heldCall(ctx, p, "release"), heldCall(ctx, p, "keep")
	streamOK, streamKept := heldStream(ctx, t, p, releaseStream), heldStream(ctx, t, p, nil)
	for range 2 {
		<-srv.held
	}
	waitFor(ctx, t, "4 RPCs in flight", func() bool { return p.Stats().InFlight() == 4 })

	const drain = 2 * time.Second
	dctx, cancel := context.WithTimeout(ctx, drain)
	defer cancel()
	start := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(dctx) }()
	waitFor(ctx, t, "the pool closed to new RPCs", func() bool { return p.Stats().Closed })

	refusedDuringDrain(ctx, t, p)

	// Released within the drain: they finish OK, before Shutdown returns.
	close(srv.release)
	close(releaseStream)
	if err := await(ctx, t, "the released unary call", unaryOK); err != nil {
		t.Errorf("unary call released within the drain: got %v, want OK", err)
	}
	if err := await(ctx, t, "the released stream", streamOK); err != nil {
		t.Errorf("stream released within the drain: got %v, want OK", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a call and a stream were still held", err)
	default:
	}
	if got := p.Stats().InFlight(); got != 2 {
		t.Errorf("in flight after the released ones ended: got %d, want 2", got)
	}

	// Still held at the deadline: cancelled.
	err = await(ctx, t, "Shutdown", shut)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with RPCs left at the deadline: got %v, want context.DeadlineExceeded", err)
	}
	if took < drain {
		t.Errorf("Shutdown returned after %v, before the drain of %v", took, drain)
	}
	for what, done := range map[string]<-chan error{"unary call": unaryKept, "stream": streamKept} {
		if err := await(ctx, t, "the kept "+what, done); !closedByShutdown(err) {
			t.Errorf("%s held past the drain: got %v, want code Canceled (or Unavailable \"transport is closing\")", what, err)
		}
	}
	t.Logf("Shutdown with a drain of %v returned after %v", drain, took)

	if err := p.Shutdown(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("second Shutdown: got %v, want ErrClosed", err)
	}
	if err := p.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("Close after Shutdown: got %v, want ErrClosed", err)
	}
	if n, err := pooltest.ConnsTo(srv.addr); err != nil || n != 0 {
		t.Errorf("connections to the server after Shutdown: got %d (%v), want 0", n, err)
	}
	waitFor(ctx, t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= baseG })
	checkNoWatchers(t)
}

// TestCloseDrains: Close lets a held call finish (its default drain is 5
// s); with nothing in flight it returns at once; a second Close returns
// ErrClosed.
func TestCloseDrains(t *testing.T) {
	srv := startDrainServer(t)
	ctx := pooltest.Context(t)
	p, err := New(srv.addr, plaintext, WithSize(3))
	if err != nil {
		t.Fatal(err)
	}
	held := heldCall(ctx, p, "release")
	<-srv.held
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	waitFor(ctx, t, "the pool closed to new RPCs", func() bool { return p.Stats().Closed })
	close(srv.release)
	if err := await(ctx, t, "the held call", held); err != nil {
		t.Errorf("call held at Close: got %v, want OK", err)
	}
	start := time.Now()
	if err := await(ctx, t, "Close", closed); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Close returns once the last RPC ended, not at its deadline.
	if took := time.Since(start); took >= closeDrain {
		t.Errorf("Close returned %v after the last RPC ended, want at once", took)
	}
	if err := p.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: got %v, want ErrClosed", err)
	}
	if n, err := pooltest.ConnsTo(srv.addr); err != nil || n != 0 {
		t.Errorf("connections to the server after Close: got %d (%v), want 0", n, err)
	}
	checkNoWatchers(t)
}
