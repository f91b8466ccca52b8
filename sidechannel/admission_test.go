// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// peerConn is a connection from a given host that records its Close.
type peerConn struct {
	net.Conn
	host   string
	closed bool
}

func (c *peerConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP(c.host), Port: 40000}
}
func (c *peerConn) Close() error { c.closed = true; return nil }

// TestHellosHaveTheirOwnBudget: hellos whose call never comes fill only
// their own budget; a call still gets a pending slot, a new hello is
// admitted by closing the oldest hello of the peer holding the most (the
// flooder's, not a lone client's), and a hello lives the hello expiry,
// not the call's.
func TestHellosHaveTheirOwnBudget(t *testing.T) {
	clock := testutil.NewFakeClock(time.Unix(1e9, 0))
	cfg, err := newConfig([]Option{WithClock(clock.Now), WithMaxPending(2), WithMaxHellos(4), WithHelloExpiry(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	r := newRegistry(cfg)
	lone := &peerConn{host: "192.0.2.1"}
	if err := r.offer(ID{100}, lone); err != nil {
		t.Fatal(err)
	}
	var flood []*peerConn
	for i := range 10 {
		c := &peerConn{host: "192.0.2.66"}
		flood = append(flood, c)
		if err := r.offer(ID{byte(i)}, c); err != nil {
			t.Fatalf("flood hello %d: %v, want it admitted", i, err)
		}
	}
	if calls, hellos := r.pending(); calls != 0 || hellos != 4 {
		t.Fatalf("pending: %d calls, %d hellos; want 0 and the hello cap of 4", calls, hellos)
	}
	if lone.closed {
		t.Errorf("the lone peer's hello was evicted, want the flooder's oldest")
	}
	for i, c := range flood {
		if want := i < 7; c.closed != want {
			t.Errorf("flood hello %d closed: %v, want %v", i, c.closed, want)
		}
	}
	// A call still finds room: its budget is the calls'.
	ctx := testutil.Context(t)
	got := make(chan error, 1)
	go func() {
		c, err := r.claim(ctx, ID{200})
		if err == nil && c == nil {
			err = errors.New("no connection")
		}
		got <- err
	}()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for calls, _ := r.pending(); calls != 1; calls, _ = r.pending() {
		select {
		case <-ctx.Done():
			t.Fatal("the call's slot: not before the test's deadline")
		case err := <-got:
			t.Fatalf("a call during the flood: %v, want it to wait for its hello", err)
		case <-tick.C:
		}
	}
	if err := r.offer(ID{200}, &peerConn{host: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("a call during the flood: %v, want its connection", err)
	}
	// The lone hello is still claimable; the rest expire at the hello expiry.
	if c, err := r.claim(ctx, ID{100}); err != nil || c != lone {
		t.Errorf("the lone hello: got %v, %v; want its connection", c, err)
	}
	clock.Advance(time.Second + 1)
	r.sweep(false)
	if calls, hellos := r.pending(); calls != 0 || hellos != 0 {
		t.Errorf("after the hello expiry: %d calls, %d hellos pending, want none", calls, hellos)
	}
	for i, c := range flood {
		if !c.closed {
			t.Errorf("flood hello %d still open after its expiry", i)
		}
	}
}
