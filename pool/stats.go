// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import "google.golang.org/grpc/connectivity"

// Stats is a snapshot of a pool, for observability. Each field is read
// atomically, but the snapshot as a whole is not: RPCs keep running while
// it is taken.
type Stats struct {
	Target string
	Policy Policy
	// Closed reports whether Close has been called.
	Closed bool
	// Conns has one entry per connection, in slot order.
	Conns []ConnStats
}

// ConnStats describes one connection of a pool.
type ConnStats struct {
	// State is the connection's connectivity state now.
	State connectivity.State
	// InFlight counts the unary RPCs and open streams on it.
	InFlight int64
	// Redials counts how often this slot's connection was replaced.
	Redials uint64
}

// Ready counts the connections in state READY.
func (s Stats) Ready() int {
	n := 0
	for _, c := range s.Conns {
		if c.State == connectivity.Ready {
			n++
		}
	}
	return n
}

// InFlight is the total of the connections' in-flight counts.
func (s Stats) InFlight() int64 {
	var n int64
	for _, c := range s.Conns {
		n += c.InFlight
	}
	return n
}

// Stats returns a snapshot of the pool. It works after Close too (the
// connections then report SHUTDOWN).
func (p *Pool) Stats() Stats {
	st := Stats{Target: p.target, Policy: p.cfg.policy, Closed: p.closed.Load(), Conns: make([]ConnStats, len(p.slots))}
	for i, s := range p.slots {
		c := s.cur.Load()
		st.Conns[i] = ConnStats{State: c.cc.GetState(), InFlight: c.inflight.Load(), Redials: s.redials.Load()}
	}
	return st
}
