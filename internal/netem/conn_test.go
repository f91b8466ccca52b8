// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// TestGRPCThroughWrappedListener serves rpclab's ping service on a
// listener wrapped in a 50 µs link and calls it with a plain client.
func TestGRPCThroughWrappedListener(t *testing.T) {
	ctx := testutil.Context(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := netem.Symmetric(netem.Link{Delay: 50 * time.Microsecond, RateBps: 1e9})
	s := server.New(server.Options{})
	go s.Serve(n.Listener(lis))
	defer s.Stop()

	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := pb.NewBenchmarkServiceClient(cc)
	for _, size := range []int32{0, 1 << 10, 1 << 20} {
		resp, err := c.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: size, Payload: &pb.Payload{Body: make([]byte, 1000)}})
		if err != nil {
			t.Fatalf("UnaryCall(response %d bytes): %v", size, err)
		}
		if got := len(resp.GetPayload().GetBody()); got != int(size) {
			t.Errorf("got a %d-byte response, want %d", got, size)
		}
	}
}

// TestGRPCThroughWrappedDialer wraps the client end instead.
func TestGRPCThroughWrappedDialer(t *testing.T) {
	ctx := testutil.Context(t)
	target := testutil.Serve(t, server.New(server.Options{}))

	dial := netem.Symmetric(netem.Link{Delay: 100 * time.Microsecond, Jitter: 50 * time.Microsecond}).Dialer(nil)
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, "tcp", addr) }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := pb.NewBenchmarkServiceClient(cc)
	for i := 0; i < 20; i++ {
		if _, err := c.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 100}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

// TestConnBytesAndHalfClose pipes bytes both ways through a wrapped client
// end and checks the half-close reaches the server after the data.
func TestConnBytesAndHalfClose(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	const n = 4 << 20
	got := make(chan []byte, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c) // until the client's half-close
		got <- b
		c.Write(b[:1000]) // answer after EOF, then close
	}()
	raw, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := netem.Symmetric(netem.Link{Delay: 200 * time.Microsecond, RateBps: 10e9}).Conn(raw)
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.DefaultTimeout))
	sent := make([]byte, n)
	for i := range sent {
		sent[i] = byte(i * 7 % 251)
	}
	if _, err := c.Write(sent); err != nil {
		t.Fatal(err)
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	b := <-got
	if len(b) != n {
		t.Fatalf("server got %d bytes, want %d", len(b), n)
	}
	for i := range b {
		if b[i] != sent[i] {
			t.Fatalf("byte %d: got %#x, want %#x", i, b[i], sent[i])
		}
	}
	reply, err := io.ReadAll(c)
	if err != nil || len(reply) != 1000 || reply[999] != sent[999] {
		t.Fatalf("reply: got %d bytes, %v; want 1000 bytes then EOF", len(reply), err)
	}
}

func TestConnReadDeadline(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	// The peer sends nothing and stays open until the test ends, so only
	// the deadline can end the read.
	quiet := make(chan struct{})
	defer close(quiet)
	go func() {
		c, err := lis.Accept()
		if err == nil {
			<-quiet
			c.Close()
		}
	}()
	raw, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := netem.Symmetric(netem.Link{Delay: time.Millisecond}).Conn(raw)
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past the deadline: got %v, want a timeout", err)
	}
	c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: got %v, want net.ErrClosed", err)
	}
}
