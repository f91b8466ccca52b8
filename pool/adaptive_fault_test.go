// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// A new connection that does not get READY within the re-dial delay is
// closed, the size stays, and the next growth waits the back-off.
func TestAdaptiveGrowFailed(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	proxy := startProxy(t, srv.addr)
	fc := newFakeClock()
	r := testRule(1, 2)
	p := newPool(t, proxy.addr(), withRule(r), fc.option(), WithRedialAfter(50*time.Millisecond))
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	l := startLoad(ctx, p, 8)
	defer l.stop()
	_ = proxy.lis.Close() // the open connection goes on; new ones are refused

	failed := fc.stepUntil(ctx, t, p, "a failed growth", 20, func(e Event) bool { return e.Reason == adapt.ReasonGrowFailed })
	if failed.From != 1 || failed.To != 1 || failed.Backoff != r.Cooldown {
		t.Errorf("failed growth: got %+v, want a hold at 1 with back-off %v", failed, r.Cooldown)
	}
	if got := p.Size(); got != 1 {
		t.Errorf("size: got %d, want 1", got)
	}
	if hold := fc.step(ctx, t, p); hold.Reason != adapt.ReasonBackoff {
		t.Errorf("decision within the back-off: got %v, want %v", hold.Reason, adapt.ReasonBackoff)
	}
}

// The server is killed while a connection is on trial and restarted:
// RPCs (wait-for-ready) fail only if they were in flight on a dead
// connection, the pool judges nothing while a connection is down, and it
// recovers its size with every connection READY.
func TestAdaptiveServerKilledWhileGrowing(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	fc := newFakeClock()
	r := testRule(2, 4)
	r.Trial = time.Hour // the trial stays open for the whole test
	p := newPool(t, srv.addr, withRule(r), fc.option(), WithRedialAfter(100*time.Millisecond))
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	const callers = 8
	l := startLoad(ctx, p, callers, grpc.WaitForReady(true))
	defer l.stop()
	waitFor(ctx, t, "RPCs to run", func() bool { return l.ok.Load() > 20 })
	fc.stepUntil(ctx, t, p, "a growth", 20, grew)
	if got := p.Size(); got != 3 {
		t.Fatalf("size after the growth: got %d, want 3", got)
	}

	srv.stop()
	waitFor(ctx, t, "the connections to notice", func() bool { return p.Stats().Ready() == 0 })
	if ev := fc.step(ctx, t, p); ev.Reason != adapt.ReasonNotReady || ev.To != 3 {
		t.Errorf("decision while the server is down: got %v at %d, want %v at 3", ev.Reason, ev.To, adapt.ReasonNotReady)
	}
	okBefore := l.ok.Load()
	srv.restart(ctx, t)
	waitFor(ctx, t, "every connection to be ready again", func() bool {
		st := p.Stats()
		return len(st.Conns) == 3 && st.Ready() == 3
	})
	waitFor(ctx, t, "RPCs to succeed after the restart", func() bool { return l.ok.Load() > okBefore+20 })
	if ev := fc.step(ctx, t, p); ev.Reason != adapt.ReasonTrial || ev.To != 3 {
		t.Errorf("decision after the restart: got %v at %d, want %v at 3", ev.Reason, ev.To, adapt.ReasonTrial)
	}
	l.stop()
	// Every failure is an RPC that was on the wire when its connection
	// died: grpc-go reports the read error. As the server closes its 3
	// connections one after the other, a caller whose RPC failed on one
	// may have its next RPC fail on the next one: at most callers x 3.
	n, byCode := l.failures()
	t.Logf("ok %d, failed %v", l.ok.Load(), byCode)
	if n > callers*3 {
		t.Errorf("failed RPCs: got %d, want at most %d (those in flight on a dying connection)", n, callers*3)
	}
	for _, err := range l.errs {
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "error reading from server") {
			t.Errorf("RPC failed with %v, want only %v for a read error (in flight on a dead connection)", err, codes.Unavailable)
		}
	}
	for _, e := range p.Stats().Events {
		if shrank(e) {
			t.Errorf("the pool shrank around the outage: %+v", e)
		}
	}
}

// countingListener counts the server's open connections.
type countingListener struct {
	net.Listener
	open atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// Load rises and falls ten times: the size never leaves min..max, the
// back-off shows in the history, the pool is back at min after each fall,
// and after Close no goroutine or connection is left.
func TestAdaptiveLoadRisesAndFalls(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: lis}
	srv := &testServer{addr: lis.Addr().String()}
	srv.serve(counted)
	t.Cleanup(srv.stop)
	ctx := pooltest.Context(t)
	goroutines := runtime.NumGoroutine()

	fc := newFakeClock()
	r := testRule(1, 3)
	r.MinGain = 0 // a trial is kept when throughput rises at all
	p, err := New(srv.addr, plaintext, withRule(r), fc.option())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	peak := 0
	for cycle := 0; cycle < 10; cycle++ {
		l := startLoad(ctx, p, 8)
		waitFor(ctx, t, "RPCs to run", func() bool { return l.ok.Load() > 10 })
		for i := 0; i < 6; i++ {
			fc.step(ctx, t, p)
			n := p.Size()
			if n < r.Min || n > r.Max {
				t.Fatalf("cycle %d: size %d, want %d..%d", cycle, n, r.Min, r.Max)
			}
			peak = max(peak, n)
		}
		l.stop()
		if n, byCode := l.failures(); n != 0 {
			t.Fatalf("cycle %d: RPCs failed: %v (%v)", cycle, byCode, l.errs)
		}
		fc.stepUntil(ctx, t, p, "the pool to shrink to min", 12, func(Event) bool { return p.Size() == r.Min })
	}
	var grows, cooldowns int
	events := p.Stats().Events
	for _, e := range events {
		if e.To > r.Max || e.To < r.Min {
			t.Errorf("event outside %d..%d: %+v", r.Min, r.Max, e)
		}
		switch {
		case grew(e):
			grows++
		case e.Reason == adapt.ReasonBackoff:
			cooldowns++
		}
	}
	t.Logf("peak size %d, %d growths, %d cooldown holds, %d events", peak, grows, cooldowns, len(events))
	if grows == 0 || cooldowns == 0 {
		t.Errorf("history: got %d growths and %d cooldown holds, want both > 0", grows, cooldowns)
	}

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFor(ctx, t, "the server's connections to close", func() bool { return counted.open.Load() == 0 })
	checkNoWatchers(t)
	waitFor(ctx, t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
}
