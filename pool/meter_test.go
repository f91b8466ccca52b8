// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

// A connection whose socket write blocks (nobody reads the other end of
// the pipe) shows a write wait that grows while it blocks, and an RPC
// that started meanwhile waits as long; once the write goes through and
// nothing is queued, the wait is gone.
func TestWriteWaitBlockedWrite(t *testing.T) {
	ctx := pooltest.Context(t)
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	m := &writeMeter{}
	m.dialed.Store(true) // the meteredConn below stands for its dialer's
	c := &meteredConn{Conn: client, m: m}

	done := make(chan error, 1)
	go func() { _, err := c.Write([]byte("frame")); done <- err }()
	waitFor(ctx, t, "the write to start", func() bool { return m.writing.Load() != 0 })
	m.queuedAt(mono()) // an RPC starts behind the blocked write
	q := m.queuedSince.Load()

	var waits []time.Duration
	var last int64
	for i := 0; i < 3; i++ {
		last = mono()
		waits = append(waits, m.sample(last, false))
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] <= waits[i-1] {
			t.Errorf("write wait while the write blocks: got %v, want it growing", waits)
		}
	}
	if waits[0] <= 0 {
		t.Errorf("write wait while the write blocks: got %v, want > 0", waits[0])
	}

	// The peer reads: the write returns; the next write carries the RPC.
	buf := make([]byte, 16)
	if _, err := server.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Write: %v", err)
	}
	go func() { _, _ = server.Read(buf) }()
	if _, err := c.Write([]byte("rpc")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	queuedWait := m.sample(mono(), false) // the RPC's wait, recorded by that write
	if want := time.Duration(last - q); queuedWait < want {
		t.Errorf("wait of the RPC queued behind the blocked write: got %v, want at least %v", queuedWait, want)
	}
	if got := m.sample(mono(), false); got != 0 {
		t.Errorf("write wait with nothing queued or writing: got %v, want 0", got)
	}
}

// Through a real adaptive pool: RPCs are counted per connection, their
// waits are recorded, and an idle connection shows no write wait, nothing
// in flight and nothing completed.
func TestSignalsIdleConnection(t *testing.T) {
	p, fc, ctx := adaptivePool(t, testRule(1, 1))
	const rpcs = 10
	for i := 0; i < rpcs; i++ {
		if err := ping(ctx, p); err != nil {
			t.Fatalf("RPC: %v", err)
		}
	}
	c := p.list()[0].cur.Load()
	if got := c.wm.waits.Load(); got < rpcs {
		t.Errorf("writes that carried a waiting RPC: got %d, want at least %d (one per sequential RPC)", got, rpcs)
	}
	busy := p.sample(fc.advance(time.Second))
	if got := busy.Conns[0].Completed; got != rpcs {
		t.Errorf("completed: got %d, want %d", got, rpcs)
	}
	// The transport may still be writing a frame of its own after the
	// last RPC (a window update, a BDP ping): a write in progress is a
	// wait the meter reports. Idle means none.
	waitFor(ctx, t, "the connection's last write to end", func() bool { return c.wm.writing.Load() == 0 })
	idle := p.sample(fc.advance(time.Second))
	want := adapt.ConnSignals{Ready: true}
	if got := idle.Conns[0]; got != want {
		t.Errorf("signals of an idle connection: got %+v, want %+v", got, want)
	}
	if got := idle.Throughput(); got != 0 {
		t.Errorf("throughput of an idle pool: got %v, want 0", got)
	}
}

// An RPC that fails before any byte is written (nothing listens) leaves no
// stale wait behind: once nothing is in flight, nothing waits.
func TestWriteWaitFailedRPC(t *testing.T) {
	ctx := pooltest.Context(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // every dial is refused
	fc := newFakeClock()
	p := newPool(t, addr, withRule(testRule(1, 1)), fc.option())
	waitFor(ctx, t, "the connection to fail", func() bool {
		return p.list()[0].cur.Load().cc.GetState() == connectivity.TransientFailure
	})
	if err := ping(ctx, p); err == nil {
		t.Fatal("RPC to a closed port: got nil error")
	}
	if got := p.sample(fc.advance(time.Second)).Conns[0].WriteWait; got != 0 {
		t.Errorf("write wait after an RPC that failed unwritten: got %v, want 0", got)
	}
}

// The adaptive pool's own dialer serves TCP and Unix-socket targets alike,
// and meters both.
func TestAdaptiveDialerTargets(t *testing.T) {
	dir := t.TempDir()
	sock := dir + "/rpclab.sock"
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	unixSrv := &testServer{addr: sock}
	unixSrv.serve(lis)
	t.Cleanup(unixSrv.stop)
	tcpSrv := startServer(t)

	tests := []struct{ name, target string }{
		{"tcp", tcpSrv.addr},
		{"unix absolute", "unix://" + sock},
		{"unix", "unix:" + sock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := pooltest.Context(t)
			p := newPool(t, tc.target, withRule(testRule(1, 1)), newFakeClock().option())
			if err := ping(ctx, p); err != nil {
				t.Fatalf("RPC to %s: %v", tc.target, err)
			}
			if got := p.list()[0].cur.Load().wm.waits.Load(); got < 1 {
				t.Errorf("metered writes: got %d, want at least 1", got)
			}
		})
	}
}

// A grpc.WithContextDialer of the caller's in WithDialOptions replaces
// the meter's: no write reaches the meter, and the RPC in flight the whole
// time must not read as a write wait that ages with it (under peers'
// emulated links it read 135 s, every connection always the limit): the
// pool reports none. The same dialer given as WithDialer is called, and
// metered.
func TestCallerDialer(t *testing.T) {
	srv := startServer(t)
	var calls atomic.Int64
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		calls.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	// An RPC held in flight (a stream opened and left open) across a
	// second of the fake clock.
	held := func(t *testing.T, p *Pool, fc *fakeClock) time.Duration {
		ctx := pooltest.Context(t)
		p.sample(fc.advance(time.Second))
		stream, err := pb.NewBenchmarkServiceClient(p).StreamingCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = stream.CloseSend() }()
		// The stream's start was stamped at pick, before any write.
		return p.sample(fc.advance(time.Second)).Conns[0].WriteWait
	}

	t.Run("in WithDialOptions", func(t *testing.T) {
		fc := newFakeClock()
		p := newPool(t, srv.addr, withRule(testRule(1, 1)), fc.option(), WithDialOptions(grpc.WithContextDialer(dial)))
		if err := ping(pooltest.Context(t), p); err != nil {
			t.Fatal(err)
		}
		if calls.Load() == 0 {
			t.Fatal("the caller's dialer was not used")
		}
		m := p.list()[0].cur.Load().wm
		m.queuedAt(mono() - int64(time.Minute)) // a stamp no write will clear
		if got := m.sample(mono(), false); got != 0 {
			t.Errorf("write wait with the meter out of the path: got %v, want 0", got)
		}
		if got := held(t, p, fc); got != 0 {
			t.Errorf("write wait of a held stream with the meter out of the path: got %v, want 0", got)
		}
	})
	t.Run("WithDialer", func(t *testing.T) {
		calls.Store(0)
		p := newPool(t, srv.addr, withRule(testRule(1, 1)), newFakeClock().option(), WithDialer(dial))
		if err := ping(pooltest.Context(t), p); err != nil {
			t.Fatal(err)
		}
		m := p.list()[0].cur.Load().wm
		if calls.Load() == 0 || !m.dialed.Load() || m.waits.Load() < 1 {
			t.Errorf("dialer calls %d, metered %v, metered writes %d; want the caller's dialer called and its connection metered", calls.Load(), m.dialed.Load(), m.waits.Load())
		}
		q := mono() - int64(time.Minute)
		m.queuedAt(q)
		if got := m.sample(mono(), false); got < time.Minute {
			t.Errorf("write wait of a stamp a minute old, metered: got %v, want at least a minute", got)
		}
	})
	t.Run("WithDialer, a fixed pool", func(t *testing.T) {
		calls.Store(0)
		p := newPool(t, srv.addr, WithSize(2), WithDialer(dial))
		if err := ping(pooltest.Context(t), p); err != nil {
			t.Fatal(err)
		}
		if err := p.Connect(pooltest.Context(t)); err != nil {
			t.Fatal(err)
		}
		if calls.Load() < 2 {
			t.Errorf("dialer calls %d, want one per connection (2)", calls.Load())
		}
	})
	if _, err := New(srv.addr, WithDialer(nil)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithDialer(nil): got %v, want ErrInvalidOption", err)
	}
}
