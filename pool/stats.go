// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"time"

	"google.golang.org/grpc/connectivity"
)

// Stats is a snapshot of a pool, for observability. Each field is read
// atomically, but the snapshot as a whole is not: RPCs keep running while
// it is taken.
type Stats struct {
	Target string
	Policy Policy
	// Closed reports whether Close or Shutdown has been called.
	Closed bool
	// Conns has one entry per connection taking RPCs, in slot order.
	Conns []ConnStats
	// Adaptive reports a pool made WithAdaptive, sized between Min and Max.
	Adaptive bool
	Min, Max int
	// Events are the adaptive pool's decisions, oldest first: every
	// change of size and every change of the reason for holding, the last
	// 256 of them. Nil for a fixed size.
	Events []Event
}

// Event is one decision of an adaptive pool: when, the size before and
// after, why in a few words, and what the interval it was taken on
// measured.
type Event struct {
	At       time.Time
	From, To int
	Reason   string
	// MeanInFlight is the mean RPCs in flight over the interval,
	// WriteWait the longest wait of RPCs before their connection's next
	// socket write, Throughput the RPCs completed per second.
	MeanInFlight float64
	WriteWait    time.Duration
	Throughput   float64
	// With and Without are, on a decision that judged a trial, the
	// throughputs (RPC/s) measured side by side with the trial's
	// connection and without it; zero on other decisions.
	With, Without float64
	// Backoff is the wait before the next trial after one that did not
	// pay (zero after one that did).
	Backoff time.Duration
}

// ConnStats describes one connection of a pool.
type ConnStats struct {
	// State is the connection's connectivity state now.
	State connectivity.State
	// InFlight counts the unary RPCs and open streams on it.
	InFlight int64
	// Completed counts the RPCs that ended on this connection (a
	// replaced connection's count is not carried over).
	Completed uint64
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
	slots := p.list()
	st := Stats{Target: p.target, Policy: p.cfg.policy, Closed: p.closed.Load(), Conns: make([]ConnStats, len(slots))}
	for i, s := range slots {
		c := s.cur.Load()
		st.Conns[i] = ConnStats{State: c.cc.GetState(), InFlight: c.inflight.Load(), Completed: c.completed.Load(), Redials: s.redials.Load()}
	}
	if p.ctl != nil {
		st.Adaptive = true
		st.Min, st.Max = p.ctl.rule.Min, p.ctl.rule.Max
		st.Events = p.ctl.history()
	}
	return st
}
