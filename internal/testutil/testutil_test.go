// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testutil_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// TestServeGate: a held GateServer answers no call before the caller's
// deadline; an open one answers at once.
func TestServeGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		held bool
		want codes.Code
	}{
		{"held", true, codes.DeadlineExceeded},
		{"open", false, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := grpc.NewClient(testutil.ServeGate(t, tc.held), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ctx := testutil.Context(t)
			if tc.held { // it would wait for ever: end it sooner
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			}
			_, err = pb.NewBenchmarkServiceClient(cc).UnaryCall(ctx, &pb.SimpleRequest{}, grpc.WaitForReady(true))
			if got := status.Code(err); got != tc.want {
				t.Errorf("got %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

// TestFailFirstAccept: the first Accept fails with EMFILE, the next
// accepts a connection.
func TestFailFirstAccept(t *testing.T) {
	lis := testutil.FailFirstAccept(testutil.Listen(t))
	defer lis.Close()
	if _, err := lis.Accept(); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("got %v, want EMFILE", err)
	}
	var d net.Dialer
	c, err := d.DialContext(testutil.Context(t), "tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := lis.Accept()
	if err != nil {
		t.Fatalf("got %v, want the dialled connection", err)
	}
	s.Close()
}

// TestContextEnds: Context has a deadline of at most DefaultTimeout.
func TestContextEnds(t *testing.T) {
	dl, ok := testutil.Context(t).Deadline()
	if !ok || time.Until(dl) > testutil.DefaultTimeout {
		t.Errorf("got deadline %v (%v), want one within %v", dl, ok, testutil.DefaultTimeout)
	}
}

// TestLongContextEnds: LongContext has a deadline past DefaultTimeout and
// within LongTimeout, and ends with its test.
func TestLongContextEnds(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = testutil.LongContext(t)
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > testutil.LongTimeout || time.Until(dl) <= testutil.DefaultTimeout {
			t.Errorf("got deadline %v (%v), want one within %v and past %v", dl, ok, testutil.LongTimeout, testutil.DefaultTimeout)
		}
		if ctx.Err() != nil {
			t.Errorf("the context ended during its test: %v", ctx.Err())
		}
	})
	if ctx.Err() == nil {
		t.Error("the context outlived its test")
	}
}
