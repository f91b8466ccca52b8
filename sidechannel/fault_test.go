// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

// rawHello dials ts and writes b, returning the connection.
func rawHello(ctx context.Context, t testing.TB, addr string, b []byte) net.Conn {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
	return c
}

func hello(id ID) []byte { return append([]byte(Magic), id[:]...) }

// waitClosed waits until the server closes c (reads reach EOF or an
// error), whatever it wrote first (gRPC answers a bad preface with its
// SETTINGS and a GOAWAY).
func waitClosed(ctx context.Context, t testing.TB, c net.Conn) {
	t.Helper()
	d, _ := ctx.Deadline()
	_ = c.SetReadDeadline(d)
	if _, err := io.Copy(io.Discard, c); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("read: the server kept the connection open")
		}
	}
}

// callWithID makes a Download call carrying id without opening anything.
func callWithID(ctx context.Context, ts *testServer, t testing.TB, id string) error {
	cc, _ := ts.dial(t)
	ctx = metadata.AppendToOutgoingContext(ctx, MetadataKey, id)
	return cc.Invoke(ctx, downloadMethod, wrapperspb.Int64(10), new(wrapperspb.Int64Value))
}

// TestBadHello: what is not a sidechannel hello goes to gRPC (which closes
// it) or is closed, and the server keeps serving.
func TestBadHello(t *testing.T) {
	ts := startServer(t, false, WithHelloTimeout(testutil.DefaultTimeout/30))
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{
		{"wrong magic", []byte("RPCLAB-SC/2\nAAAAAAAAAAAAAAAA")},
		{"http/1", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"short id then silence", []byte(Magic + "abc")},
		{"short magic then silence", []byte(Magic[:4])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			waitClosed(ctx, t, rawHello(ctx, t, ts.addr, tc.bytes))
			cc, c := ts.dial(t)
			if _, _, err := download(ctx, cc, c, 1000); err != nil {
				t.Errorf("download after: %v", err)
			}
		})
	}
}

// TestIDs: unknown, expired, reused and missing ids end with a clear
// status, and their connections are closed.
func TestIDs(t *testing.T) {
	clock := testutil.NewFakeClock(time.Unix(1e9, 0))
	ts := startServer(t, false, WithClock(clock.Now), WithExpiry(time.Minute))
	ctx := testutil.Context(t)

	t.Run("unknown id expires", func(t *testing.T) {
		c := rawHello(ctx, t, ts.addr, hello(ID{1}))
		waitPending(ctx, t, ts.sc, 1)
		clock.Advance(time.Minute + 1)
		ts.sc.reg.sweep(false)
		waitClosed(ctx, t, c)
		if got := ts.sc.Pending(); got != 0 {
			t.Errorf("pending: got %d, want 0", got)
		}
	})
	t.Run("expired id", func(t *testing.T) {
		c := rawHello(ctx, t, ts.addr, hello(ID{2}))
		waitPending(ctx, t, ts.sc, 1)
		clock.Advance(time.Minute + 1)
		err := callWithID(ctx, ts, t, ID{2}.String())
		if got := status.Code(err); got != codes.FailedPrecondition {
			t.Errorf("call: got %v (%v), want %v", got, err, codes.FailedPrecondition)
		}
		waitClosed(ctx, t, c)
	})
	t.Run("reused id", func(t *testing.T) {
		_ = rawHello(ctx, t, ts.addr, hello(ID{3}))
		waitPending(ctx, t, ts.sc, 1)
		if err := callWithID(ctx, ts, t, ID{3}.String()); err != nil {
			t.Fatalf("first call: %v", err)
		}
		waitClosed(ctx, t, rawHello(ctx, t, ts.addr, hello(ID{3})))
		err := callWithID(ctx, ts, t, ID{3}.String())
		if got := status.Code(err); got != codes.AlreadyExists {
			t.Errorf("second call: got %v (%v), want %v", got, err, codes.AlreadyExists)
		}
	})
	for _, id := range []string{"", "zz", ID{4}.String() + "00"} {
		t.Run("bad id "+id, func(t *testing.T) {
			err := callWithID(ctx, ts, t, id)
			if got := status.Code(err); got != codes.InvalidArgument {
				t.Errorf("got %v (%v), want %v", got, err, codes.InvalidArgument)
			}
		})
	}
}

func waitPending(ctx context.Context, t testing.TB, s *Server, want int) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for s.Pending() != want {
		select {
		case <-ctx.Done():
			t.Fatalf("pending: got %d, want %d", s.Pending(), want)
		case <-tick.C:
		}
	}
}

// TestTooManyPending: above WithMaxPending a call ends ResourceExhausted;
// above WithMaxHellos a new hello is admitted and the oldest one closed.
// Hellos and calls have budgets of their own.
func TestTooManyPending(t *testing.T) {
	ts := startServer(t, false, WithMaxPending(2), WithMaxHellos(2))
	ctx := testutil.Context(t)
	oldest := rawHello(ctx, t, ts.addr, hello(ID{1}))
	waitPending(ctx, t, ts.sc, 1)
	_ = rawHello(ctx, t, ts.addr, hello(ID{2}))
	waitPending(ctx, t, ts.sc, 2)
	_ = rawHello(ctx, t, ts.addr, hello(ID{3}))
	waitClosed(ctx, t, oldest)
	waitPending(ctx, t, ts.sc, 2)
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	for _, id := range []ID{{4}, {5}} {
		go func() { _ = callWithID(callCtx, ts, t, id.String()) }()
	}
	waitPending(ctx, t, ts.sc, 4) // two hellos, two calls
	err := callWithID(ctx, ts, t, ID{6}.String())
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Errorf("call: got %v (%v), want %v", got, err, codes.ResourceExhausted)
	}
}

// TestSlowReader: a client that never reads fails the server's write after
// the write timeout; the call ends DeadlineExceeded.
func TestSlowReader(t *testing.T) {
	ts := startServer(t, false, WithWriteTimeout(testutil.DefaultTimeout/300))
	cc, c := ts.dial(t)
	ctx := testutil.Context(t)
	octx, sc, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	err = cc.Invoke(octx, downloadMethod, wrapperspb.Int64(1<<40), new(wrapperspb.Int64Value))
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("call: got %v (%v), want %v", got, err, codes.DeadlineExceeded)
	}
	// The write timeout, not the test's own deadline, ended it.
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "i/o timeout") {
		t.Errorf("call: got %q, want the write's i/o timeout", msg)
	}
}

// TestClientDies: a client that vanishes mid-transfer (its sidechannel and
// gRPC connection closed, no cancel sent) ends the handler, and every
// goroutine the transfer started is gone.
func TestClientDies(t *testing.T) {
	ts := startServer(t, false)
	ctx := testutil.Context(t)
	base := runtime.NumGoroutine()
	cc, c := ts.dial(t)
	octx, sc, err := c.Open(context.WithoutCancel(ctx))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cc.Invoke(octx, downloadMethod, wrapperspb.Int64(1<<40), new(wrapperspb.Int64Value)) }()
	if _, err := io.ReadFull(sc, make([]byte, 1<<20)); err != nil {
		t.Fatalf("read: %v", err)
	}
	sc.c.Close() // the socket only, as a dying process would
	cc.Close()
	if err := <-ts.files.ended; err == nil {
		t.Errorf("handler: got nil, want an error")
	}
	sc.Close()
	waitGoroutines(ctx, t, base)
}

// TestHalfOpenFlood: ten thousand connections from one peer that never
// finish their hello hold at most WithMaxHandshakes goroutines, are closed
// at the hello timeout, and the server serves afterwards with its
// goroutines back to their baseline.
func TestHalfOpenFlood(t *testing.T) {
	const flood, maxHandshakes = 10000, 64
	ts := startServer(t, false, WithMaxHandshakes(maxHandshakes), WithHelloTimeout(testutil.DefaultTimeout/60))
	ctx := testutil.Context(t)
	base := runtime.NumGoroutine()
	var d net.Dialer
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	peak := 0
	for i := range flood {
		c, err := d.DialContext(ctx, "tcp", ts.addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			_, _ = c.Write([]byte(Magic)) // the magic, then nothing
		}
		peak = max(peak, runtime.NumGoroutine())
	}
	if limit := base + maxHandshakes + 8; peak > limit {
		t.Errorf("goroutines during the flood: got %d, want at most %d", peak, limit)
	}
	waitGoroutines(ctx, t, base)
	for _, c := range conns { // every one was closed by the server
		waitClosed(ctx, t, c)
	}
	cc, c := ts.dial(t)
	if _, _, err := download(ctx, cc, c, 1<<20); err != nil {
		t.Errorf("download after the flood: %v", err)
	}
}

// flakyListener fails its first Accepts as a listener out of file
// descriptors does.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, errors.New("accept: too many open files")
	}
	return l.Listener.Accept()
}

// TestAcceptErrorKeepsServing: a failed Accept that is not the listener's
// close is waited out, not fatal.
func TestAcceptErrorKeepsServing(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: lis}
	fl.fails.Store(3)
	s, err := NewServer(fl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := testutil.Context(t)
	go func() {
		c, err := s.Listener().Accept()
		if err == nil {
			_, _ = c.Write([]byte("ok"))
			c.Close()
		}
	}()
	c := rawHello(ctx, t, lis.Addr().String(), []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	d, _ := ctx.Deadline()
	_ = c.SetReadDeadline(d)
	got, err := io.ReadAll(c)
	if string(got) != "ok" {
		t.Errorf("got %q, %v, want %q from the gRPC side", got, err, "ok")
	}
}

// TestAcceptEndsWithCall: a call whose sidechannel never comes ends with
// its own context's status, and leaves nothing pending.
func TestAcceptEndsWithCall(t *testing.T) {
	ts := startServer(t, false)
	ctx, cancel := context.WithTimeout(testutil.Context(t), testutil.DefaultTimeout/100)
	defer cancel()
	err := callWithID(ctx, ts, t, ID{9}.String())
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("call: got %v (%v), want %v", got, err, codes.DeadlineExceeded)
	}
	herr := <-ts.files.ended
	if got := status.Code(herr); got != codes.DeadlineExceeded && got != codes.Canceled {
		t.Errorf("handler: got %v (%v), want %v or %v", got, herr, codes.DeadlineExceeded, codes.Canceled)
	}
	waitPending(testutil.Context(t), t, ts.sc, 0)
}

// TestServerClose: Close fails a waiting Accept with ErrClosed, closes a
// hello waiting for its call, and a closed Server refuses new hellos.
func TestServerClose(t *testing.T) {
	ts := startServer(t, false)
	ctx := testutil.Context(t)
	c := rawHello(ctx, t, ts.addr, hello(ID{1}))
	waitPending(ctx, t, ts.sc, 1)
	cc, _ := ts.dial(t)
	done := make(chan error, 1)
	go func() {
		ctx := metadata.AppendToOutgoingContext(ctx, MetadataKey, ID{2}.String())
		done <- cc.Invoke(ctx, downloadMethod, wrapperspb.Int64(1), new(wrapperspb.Int64Value))
	}()
	waitPending(ctx, t, ts.sc, 2)
	if err := ts.sc.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-ts.files.ended; !errors.Is(err, ErrClosed) {
		t.Errorf("Accept: got %v, want %v", err, ErrClosed)
	}
	<-done
	waitClosed(ctx, t, c)
	if err := ts.sc.reg.offer(ID{3}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("offer after Close: got %v, want %v", err, ErrClosed)
	}
}
