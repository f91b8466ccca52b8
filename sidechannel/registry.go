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
type registry struct {
	now    func() time.Time
	expiry time.Duration
	max    int

	mu     sync.Mutex
	slots  map[ID]*slot
	spent  map[ID]time.Time
	closed bool
}

type slot struct {
	deadline time.Time
	conn     net.Conn      // the hello came first
	ready    chan net.Conn // the call came first: buffered, one conn
	gone     chan struct{} // closed when the waiting slot expires
}

func newRegistry(cfg *config) *registry {
	return &registry{now: cfg.now, expiry: cfg.expiry, max: cfg.maxPending, slots: map[ID]*slot{}, spent: map[ID]time.Time{}}
}

// offer hands the connection of a hello to its call, or leaves it to wait.
func (r *registry) offer(id ID, c net.Conn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	switch s := r.slots[id]; {
	case r.closed:
		return ErrClosed
	case r.isSpent(id, now):
		return ErrReused
	case s != nil && s.conn != nil:
		return ErrReused
	case s != nil:
		delete(r.slots, id)
		r.spent[id] = now.Add(r.expiry)
		s.ready <- c // buffered, and only this branch sends
		return nil
	case len(r.slots) >= r.max:
		return ErrTooManyPending
	}
	r.slots[id] = &slot{deadline: now.Add(r.expiry), conn: c}
	return nil
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
	s := r.slots[id]
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, ErrClosed
	case r.isSpent(id, now) || (s != nil && s.conn == nil):
		r.mu.Unlock()
		return nil, ErrReused
	case s != nil:
		delete(r.slots, id)
		if now.After(s.deadline) {
			r.mu.Unlock()
			s.conn.Close()
			return nil, ErrExpired
		}
		r.spent[id] = now.Add(r.expiry)
		r.mu.Unlock()
		return s.conn, nil
	case len(r.slots) >= r.max:
		r.mu.Unlock()
		return nil, ErrTooManyPending
	}
	s = &slot{deadline: now.Add(r.expiry), ready: make(chan net.Conn, 1), gone: make(chan struct{})}
	r.slots[id] = s
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
		if r.slots[id] == s {
			delete(r.slots, id)
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

// pending is how many ids wait for their other half.
func (r *registry) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.slots)
}

// sweep expires the slots past their deadline: a waiting connection is
// closed, a waiting call is told. all expires every slot (on Close).
func (r *registry) sweep(all bool) {
	r.mu.Lock()
	now := r.now()
	var conns []net.Conn
	for id, s := range r.slots {
		if !all && !now.After(s.deadline) {
			continue
		}
		delete(r.slots, id)
		if s.conn != nil {
			conns = append(conns, s.conn)
		} else {
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
