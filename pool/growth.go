// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"math/rand/v2"
	"runtime"
	"time"

	"google.golang.org/grpc/connectivity"
)

// Growth at the server's stream limit (WithStreamLimit).
//
// The pick claims a stream by raising the connection's in-flight count
// only while it is below the limit (compare and swap), so concurrent
// picks never put more than the limit on a connection while another
// connection (or room to grow) is left. Adding
// a connection takes the pool's lock; retiring one is done by a
// goroutine of its own, off the RPC path.

// tier is which connections a growth pick chooses among.
type tier int

const (
	tierFree       tier = iota // READY or IDLE, below the limit
	tierConnecting             // CONNECTING, below the limit: a grown connection on its way up
)

// in reports whether a connection in state st with n RPCs in flight is in
// tier t under limit.
func (t tier) in(st connectivity.State, n, limit int64) bool {
	if n >= limit {
		return false
	}
	if t == tierFree {
		return usable(st)
	}
	return st == connectivity.Connecting
}

// pickGrowth is pick with growth on: among READY or IDLE connections below
// the limit by the policy; failing those, a connection still connecting
// below the limit (one just added, or a new pool's: without this, every
// RPC arriving while it connects would add another); failing that, a new
// connection, up to the max. At the max, or when every connection is in
// TRANSIENT_FAILURE or SHUTDOWN, the policy picks among all, as without
// growth.
func (p *Pool) pickGrowth() *conn {
	limit := int64(p.cfg.streamLimit)
	for {
		slots := p.list()
		var ready, dialling, free, connecting int
		for _, s := range slots {
			c := s.cur.Load()
			st, n := connectivity.State(c.state.Load()), c.inflight.Load()
			switch {
			case usable(st):
				ready++
			case st == connectivity.Connecting:
				dialling++
			}
			if tierFree.in(st, n, limit) {
				free++
			} else if tierConnecting.in(st, n, limit) {
				connecting++
			}
		}
		var s *slot
		bounded := true // the claim must stay within the limit
		switch {
		case free > 0:
			s = p.pickTier(slots, tierFree, free, limit)
		case connecting > 0:
			s = p.pickTier(slots, tierConnecting, connecting, limit)
		case ready == 0 && dialling == 0:
			// Every connection is down: no growth, the RPC goes where
			// the policy points, as without growth.
			s, bounded = p.byPolicy(slots), false
		case len(slots) < p.cfg.maxConns:
			var again bool
			if s, again = p.growSlot(len(slots)); again {
				continue
			}
			if s == nil {
				s, bounded = p.byPolicy(slots), false
			}
		default:
			s, bounded = p.byPolicy(slots), false
		}
		if s == nil {
			continue // the connections changed while we looked
		}
		c := s.cur.Load()
		if bounded && !c.claim(limit) {
			continue // another pick took the last stream first: look again
		}
		if !bounded {
			c.inflight.Add(1)
		}
		p.claimed.Add(1) // after c's count: claimed never runs ahead
		if !c.retired.Load() {
			return c
		}
		c.leave() // retired meanwhile: look again
	}
}

// claim counts one more RPC on c if c has fewer than limit in flight, and
// reports whether it did. It never adds a count it then takes back: other
// picks reading c's count see only RPCs that run on c, so a burst of picks
// racing for c's last stream cannot make c look full while it is not (and
// send, at the max, the rest to a full connection).
func (c *conn) claim(limit int64) bool {
	for {
		n := c.inflight.Load()
		if n >= limit {
			return false
		}
		if c.inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// pickTier picks by the policy among the n slots in tier t: round-robin
// takes the next of them in turn; least-loaded the less busy of two drawn
// at random. It returns nil if the slots changed since they were counted.
func (p *Pool) pickTier(slots []*slot, t tier, n int, limit int64) *slot {
	if n == 1 || p.cfg.policy != LeastLoaded {
		k := 0
		if n > 1 {
			k = int((p.next.Add(1) - 1) % uint64(n))
		}
		return nthInTier(slots, t, k, limit)
	}
	r := rand.Uint64()
	i := int(r % uint64(n))
	j := int((r >> 32) % uint64(n-1))
	if j >= i {
		j++
	}
	a, b := nthInTier(slots, t, i, limit), nthInTier(slots, t, j, limit)
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case b.cur.Load().inflight.Load() < a.cur.Load().inflight.Load():
		return b
	}
	return a
}

// nthInTier is the k-th slot (from 0) in tier t, or nil.
func nthInTier(slots []*slot, t tier, k int, limit int64) *slot {
	for _, s := range slots {
		c := s.cur.Load()
		if t.in(connectivity.State(c.state.Load()), c.inflight.Load(), limit) {
			if k == 0 {
				return s
			}
			k--
		}
	}
	return nil
}

// growSlot adds a connection for an RPC that found every connection at
// the limit, seen being how many slots it saw. It reports again if the
// slots changed meanwhile (another RPC grew the pool: look again), and a
// nil slot if the pool is at its max, closed, or the connection could not
// be created.
func (p *Pool) growSlot(seen int) (s *slot, again bool) {
	p.mu.Lock()
	old := p.list()
	if len(old) != seen && !p.closed.Load() {
		// Looked at first: another RPC that grew the pool to its max
		// must send this one to look again, not to pick among the slots
		// it saw before the growth.
		p.mu.Unlock()
		return nil, true
	}
	if p.closed.Load() || len(old) >= p.cfg.maxConns {
		p.mu.Unlock()
		return nil, false
	}
	if p.streamLeft(old) {
		// The RPC's look at the connections' counts was not one moment:
		// another RPC left a connection it had already looked at and took
		// a stream on one it looked at next, so every connection looked
		// full. A stream is free: look again, after letting run an RPC
		// that may be between its two counts (see streamLeft).
		p.mu.Unlock()
		runtime.Gosched()
		return nil, true
	}
	c, err := p.dial()
	if err != nil {
		p.mu.Unlock()
		p.cfg.logger.Warn("pool: grow at the stream limit", "target", p.target, "err", err)
		return nil, false
	}
	s = p.newSlotID(c, freeID(old, p.cfg.size))
	s.grown = true
	next := append(old[:len(old):len(old)], s) // a new array: readers keep theirs
	p.slots.Store(&next)
	if !p.cfg.lazy {
		c.cc.Connect()
	}
	p.wg.Add(1)
	go p.watch(s, c)
	p.mu.Unlock()
	p.met.resized(+1)
	p.cfg.logger.Info("pool: grew at the stream limit", "target", p.target, "conn", s.id, "size", len(next))
	return s, false
}

// streamLeft reports whether the RPCs in flight are fewer than the
// streams of the usable and connecting slots in slots: one count read at
// one moment. claimed never runs ahead of the connections' counts (a pick
// adds to it after the connection's, a leave takes from it before), so
// streamLeft says "free" while every stream is taken only while an RPC is
// between its two counts; the counts of connections that are down or
// retired, read one by one, only make it say "none left" (and the pool
// grow) as it did before.
func (p *Pool) streamLeft(slots []*slot) bool {
	limit := int64(p.cfg.streamLimit)
	used, capacity := p.claimed.Load(), int64(0)
	for _, s := range slots {
		c := s.cur.Load()
		if st := connectivity.State(c.state.Load()); usable(st) || st == connectivity.Connecting {
			capacity += limit
		} else {
			used -= c.inflight.Load()
		}
	}
	return used < capacity
}

// freeID is the lowest slot id from base up that no slot in slots has: a
// grown connection's index in the metrics, so that the number of series
// stays bounded by the max however often the pool grows and retires.
func freeID(slots []*slot, base int) int {
	for id := base; ; id++ {
		used := false
		for _, s := range slots {
			if s.id == id {
				used = true
				break
			}
		}
		if !used {
			return id
		}
	}
}

// retireIdle closes grown connections that carried no RPC for the idle
// time, until the pool closes. It looks every quarter of the idle time:
// a connection is retired between one and one and a quarter idle times
// after its last RPC ended.
func (p *Pool) retireIdle() {
	defer p.wg.Done()
	idle := p.cfg.growthIdle
	t := time.NewTicker(max(idle/4, time.Millisecond))
	defer t.Stop()
	type seen struct {
		c     *conn
		picks uint64 // RPCs started on c, as of since
		since time.Time
	}
	last := map[*slot]seen{}
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		live := map[*slot]bool{}
		for _, s := range p.list() {
			if !s.grown {
				continue
			}
			live[s] = true
			c := s.cur.Load()
			in := c.inflight.Load()
			picks := c.completed.Load() + uint64(max(in, 0))
			e, ok := last[s]
			if !ok || e.c != c || in > 0 || picks != e.picks {
				last[s] = seen{c: c, picks: picks, since: now}
				continue
			}
			if now.Sub(e.since) >= idle && p.retireSlot(s, c) {
				delete(last, s)
			}
		}
		for s := range last {
			if !live[s] {
				delete(last, s)
			}
		}
	}
}

// retireSlot drops grown slot s, whose connection is c: no new RPC picks
// it, its watcher stops, and c closes once no RPC is on it (an RPC that
// picked it a moment ago ends there). It reports false if s changed or
// the pool closed.
func (p *Pool) retireSlot(s *slot, c *conn) bool {
	p.mu.Lock()
	old := p.list()
	if p.closed.Load() || s.cur.Load() != c || c.inflight.Load() != 0 {
		p.mu.Unlock()
		return false
	}
	next := make([]*slot, 0, len(old))
	for _, o := range old {
		if o != s {
			next = append(next, o)
		}
	}
	if len(next) == len(old) {
		p.mu.Unlock()
		return false
	}
	p.slots.Store(&next)
	p.retired[c] = struct{}{}
	s.cancel()
	p.mu.Unlock()
	p.met.resized(-1)
	c.retire()
	p.cfg.logger.Info("pool: retired an idle grown connection", "target", p.target, "conn", s.id, "size", len(next))
	return true
}
