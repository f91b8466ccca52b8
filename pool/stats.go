// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/connectivity"
)

// Stats is a snapshot of a pool, for observability. Each field is read
// atomically, but the snapshot as a whole is not: RPCs keep running while
// it is taken.
type Stats struct {
	Target string
	Policy Policy
	// Closed reports whether Close has been called.
	Closed bool
	// Conns has one entry per connection taking RPCs, in slot order.
	Conns []ConnStats
	// Adaptive reports a pool made WithAdaptive, sized between Min and Max.
	Adaptive bool
	Min, Max int
	// Events are the adaptive pool's decisions, oldest first: every
	// change of size and every change of the reason for holding, the last
	// MaxEvents of them. Nil for a fixed size.
	Events []Event
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

// EventColumns names the fields Event.Columns gives, in order: a header
// for a table of an adaptive pool's decisions (rpclab sweep
// --pool-events, peers ramp --events).
var EventColumns = []string{"at s", "from", "to", "action", "reason", "in flight", "mean in flight",
	"max write wait µs", "cpu busy", "rpc/s", "baseline rpc/s", "tried rpc/s", "baseline µs", "tried µs",
	"baseline cpu µs/rpc", "tried cpu µs/rpc", "steal"}

// Columns is the event as the text fields EventColumns names, its time in
// seconds after start (negative before it); a trial's two sides are zero
// on decisions that did not judge one.
func (e Event) Columns(start time.Time) []string {
	f := func(format string, v any) string { return fmt.Sprintf(format, v) }
	return []string{
		f("%.1f", e.At.Sub(start).Seconds()), strconv.Itoa(e.From), strconv.Itoa(e.To), e.Action.String(), e.Reason.String(),
		strconv.FormatInt(e.InFlight, 10), f("%.1f", e.MeanInFlight), f("%.0f", float64(e.MaxWriteWait)/1e3), f("%.2f", e.CPUBusy),
		f("%.0f", e.Throughput), f("%.0f", e.Baseline), f("%.0f", e.Tried), f("%.0f", float64(e.BaseLatency)/1e3), f("%.0f", float64(e.TriedLatency)/1e3),
		f("%.1f", float64(e.BaseCPU)/1e3), f("%.1f", float64(e.TriedCPU)/1e3), f("%.2f", e.Steal),
	}
}
