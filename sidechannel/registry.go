// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"net"
	"sync"
	"time"
)

// registry pairs hellos with calls by id. Whichever arrives first leaves a
// slot; a slot expires at its deadline (by the injectable clock), and a
// claimed id stays spent until its own deadline so that a replay is
// refused rather than left waiting.
//
// The two kinds of slot have budgets of their own. A call's slot (the call
// came first) needs a gRPC call and counts against maxCalls. A hello's
// slot (the connection came first) needs only a TCP connection, so anyone
// who can reach the port can make one: it counts against maxHellos, lives
// helloLife (shorter than a call's wait), and when the budget is full the
// oldest hello of the peer holding the most is closed to admit the new
// one. A flood of hellos therefore never refuses a call, and never
// refuses a real client's hello either: it can only evict one that has
// waited for its call longer than the flood took to send maxHellos more.
type registry struct {
	now       func() time.Time
	expiry    time.Duration
	helloLife time.Duration
	maxCalls  int
	maxHellos int

	mu     sync.Mutex
	calls  map[ID]*slot // a call waits for its hello
	hellos map[ID]*slot // a hello waits for its call
	seq    uint64       // arrival order of hellos
	spent  map[ID]time.Time
	closed bool
}

type slot struct {
	deadline time.Time
	conn     net.Conn      // the hello came first
	peer     string        // its remote host
	seq      uint64        // its arrival
	ready    chan net.Conn // the call came first: buffered, one conn
	gone     chan struct{} // closed when the waiting slot expires
}

func newRegistry(cfg *config) *registry {
	return &registry{
		now: cfg.now, expiry: cfg.expiry, helloLife: min(cfg.helloExpiry, cfg.expiry),
		maxCalls: cfg.maxPending, maxHellos: cfg.maxHellos,
		calls: map[ID]*slot{}, hellos: map[ID]*slot{}, spent: map[ID]time.Time{},
	}
}

// offer hands the connection of a hello to its call, or leaves it to wait.
func (r *registry) offer(id ID, c net.Conn) error {
	r.mu.Lock()
	now := r.now()
	var evicted net.Conn
	switch s := r.calls[id]; {
	case r.closed:
		r.mu.Unlock()
		return ErrClosed
	case r.isSpent(id, now) || r.hellos[id] != nil:
		r.mu.Unlock()
		return ErrReused
	case s != nil:
		delete(r.calls, id)
		r.spent[id] = now.Add(r.expiry)
		s.ready <- c // buffered, and only this branch sends
		r.mu.Unlock()
		return nil
	case len(r.hellos) >= r.maxHellos:
		evicted = r.evictLocked()
	}
	r.seq++
	r.hellos[id] = &slot{deadline: now.Add(r.helloLife), conn: c, peer: peerOf(c), seq: r.seq}
	r.mu.Unlock()
	if evicted != nil {
		evicted.Close()
	}
	return nil
}

// evictLocked removes the oldest waiting hello of the peer that holds the
// most, and returns its connection for the caller to close.
func (r *registry) evictLocked() net.Conn {
	held := map[string]int{}
	for _, s := range r.hellos {
		held[s.peer]++
	}
	var victim ID
	var vs *slot
	for id, s := range r.hellos {
		if vs == nil || held[s.peer] > held[vs.peer] || (held[s.peer] == held[vs.peer] && s.seq < vs.seq) {
			victim, vs = id, s
		}
	}
	if vs == nil {
		return nil
	}
	delete(r.hellos, victim)
	return vs.conn
}

// peerOf is the host a connection comes from ("" when unknown).
func peerOf(c net.Conn) string {
	if c == nil || c.RemoteAddr() == nil {
		return ""
	}
	a := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(a); err == nil {
		return h
	}
	return a
}

func (r *registry) isSpent(id ID, now time.Time) bool {
	d, ok := r.spent[id]
	if ok && now.After(d) {
		delete(r.spent, id)
		return false
	}
	return ok
}

// claim returns the connection that presented id, waiting for it until ctx
// ends or the slot expires.
func (r *registry) claim(ctx context.Context, id ID) (net.Conn, error) {
	r.mu.Lock()
	now := r.now()
	s := r.hellos[id]
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, ErrClosed
	case r.isSpent(id, now) || r.calls[id] != nil:
		r.mu.Unlock()
		return nil, ErrReused
	case s != nil:
		delete(r.hellos, id)
		if now.After(s.deadline) {
			r.mu.Unlock()
			s.conn.Close()
			return nil, ErrExpired
		}
		r.spent[id] = now.Add(r.expiry)
		r.mu.Unlock()
		return s.conn, nil
	case len(r.calls) >= r.maxCalls:
		r.mu.Unlock()
		return nil, ErrTooManyPending
	}
	s = &slot{deadline: now.Add(r.expiry), ready: make(chan net.Conn, 1), gone: make(chan struct{})}
	r.calls[id] = s
	r.mu.Unlock()

	select {
	case c := <-s.ready:
		return c, nil
	case <-s.gone:
		select { // the hello may have won the race with the sweep
		case c := <-s.ready:
			return c, nil
		default:
		}
		if r.isClosed() {
			return nil, ErrClosed
		}
		return nil, ErrExpired
	case <-ctx.Done():
		r.mu.Lock()
		if r.calls[id] == s {
			delete(r.calls, id)
		}
		r.mu.Unlock()
		select { // a hello delivered meanwhile has nobody left to read it
		case c := <-s.ready:
			c.Close()
		default:
		}
		return nil, StatusError(context.Cause(ctx))
	}
}

func (r *registry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// pending is how many ids wait for their other half: calls, then hellos.
func (r *registry) pending() (calls, hellos int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls), len(r.hellos)
}

// sweep expires the slots past their deadline: a waiting connection is
// closed, a waiting call is told. all expires every slot (on Close).
func (r *registry) sweep(all bool) {
	r.mu.Lock()
	now := r.now()
	var conns []net.Conn
	for id, s := range r.hellos {
		if all || now.After(s.deadline) {
			delete(r.hellos, id)
			conns = append(conns, s.conn)
		}
	}
	for id, s := range r.calls {
		if all || now.After(s.deadline) {
			delete(r.calls, id)
			close(s.gone)
		}
	}
	for id, d := range r.spent {
		if all || now.After(d) {
			delete(r.spent, id)
		}
	}
	if all {
		r.closed = true
	}
	r.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}
