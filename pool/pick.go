// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"google.golang.org/grpc/connectivity"
)

// Policy is how an RPC picks its connection.
type Policy int

const (
	// RoundRobin takes the connections in turn: one atomic counter, no
	// lock. It spreads RPCs evenly, which is best when every connection is
	// equally fast.
	RoundRobin Policy = iota
	// LeastLoaded draws two different connections at random and takes the
	// one with fewer RPCs in flight ("power of two random choices"): two
	// atomic loads, no lock, no shared counter. A connection whose server
	// side stalls collects in-flight RPCs and so stops being picked.
	LeastLoaded
)

// String gives the policy's name as rpclab's --conn flag spells it.
func (p Policy) String() string {
	switch p {
	case RoundRobin:
		return "round-robin"
	case LeastLoaded:
		return "least-loaded"
	default:
		return "Policy(" + strconv.Itoa(int(p)) + ")"
	}
}

// usable reports whether a connection in state s should take RPCs while
// another connection is READY. IDLE is usable: an RPC is what wakes an idle
// connection in lazy mode. CONNECTING is not: the RPC would wait for a
// handshake (or for a listener that never answers) while a ready connection
// sits next to it.
func usable(s connectivity.State) bool {
	return s == connectivity.Ready || s == connectivity.Idle
}

// pick chooses a connection for one RPC and counts it as in flight. The
// caller must call c.release() when the RPC ends. pick takes no lock: it
// reads the slots' current connections, their cached states and their
// in-flight counters atomically. With growth on (WithStreamLimit) it is
// pickGrowth, which takes the pool's lock only to add a connection.
func (p *Pool) pick() *conn {
	if p.cfg.streamLimit > 0 {
		return p.pickGrowth()
	}
	for {
		slots := p.list()
		if a := int(p.active.Load()); a > 0 && a < len(slots) {
			slots = slots[:a]
		}
		c := p.byPolicy(slots).cur.Load()
		c.inflight.Add(1)
		// A connection retired between the load and the increment may
		// already be closed (see conn.retire); take the slot's new one,
		// or, if the adaptive pool dropped the slot, another slot.
		if !c.retired.Load() {
			return c
		}
		c.leave()
	}
}

// byPolicy picks among slots by the pool's policy.
func (p *Pool) byPolicy(slots []*slot) *slot {
	switch {
	case len(slots) == 1:
		return slots[0]
	case p.cfg.policy == LeastLoaded:
		return pickLeastLoaded(slots)
	default:
		return p.pickRoundRobin(slots)
	}
}

// pickRoundRobin takes the next slot in turn, skipping unusable ones while a
// usable one exists.
func (p *Pool) pickRoundRobin(slots []*slot) *slot {
	n := uint64(len(slots))
	i := (p.next.Add(1) - 1) % n
	return usableFrom(slots, int(i))
}

// pickLeastLoaded draws two different slots and takes the usable one with
// fewer RPCs in flight (the first drawn on a tie).
func pickLeastLoaded(slots []*slot) *slot {
	n := uint64(len(slots))
	r := rand.Uint64()
	i := r % n
	j := (r >> 32) % (n - 1)
	if j >= i {
		j++
	}
	a, b := slots[i].cur.Load(), slots[j].cur.Load()
	ua, ub := usable(connectivity.State(a.state.Load())), usable(connectivity.State(b.state.Load()))
	switch {
	case ua && ub:
		if b.inflight.Load() < a.inflight.Load() {
			return slots[j]
		}
		return slots[i]
	case ua:
		return slots[i]
	case ub:
		return slots[j]
	default:
		return usableFrom(slots, int(i))
	}
}

// usableFrom returns slot i if it is usable, else the next usable slot after
// it, else slot i (every connection is down: the RPC then fails fast with
// UNAVAILABLE, or waits if the caller asked for grpc.WaitForReady).
func usableFrom(slots []*slot, i int) *slot {
	n := len(slots)
	for k := 0; k < n; k++ {
		s := slots[(i+k)%n]
		if usable(connectivity.State(s.cur.Load().state.Load())) {
			return s
		}
	}
	return slots[i]
}

// ParsePolicy is the Policy that String spells s ("round-robin" or
// "least-loaded"); other names are an error wrapping ErrInvalidOption.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range []Policy{RoundRobin, LeastLoaded} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown policy %q (want round-robin or least-loaded)", ErrInvalidOption, s)
}
