// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package adapt

import "time"

// Signals is what an adaptive pool measured over one interval of its
// control loop: the input of a Sizer.
type Signals struct {
	// Interval is the time the counts below cover.
	Interval time.Duration
	// Steal is the share of the host's CPU time the hypervisor took over
	// the interval (/proc/stat's steal over all its CPU time): time no
	// process could run. Negative when the platform cannot tell.
	Steal float64
	// Conns has one entry per connection taking RPCs, in slot order.
	Conns []ConnSignals
	// Unparked reports that the interval ran with connections parked
	// (Sizer's Active) and the pool gave them back to the RPCs before it
	// ended, because the RPCs in flight stayed past the park limit.
	Unparked bool
	// Reads is how many times the pool read the RPCs in flight over the
	// interval, MeanInFlight and PeakInFlight their mean and most; with
	// no read, the count at the interval's end stands for both.
	Reads        int
	MeanInFlight float64
	PeakInFlight int64
}

// ConnSignals is what one connection measured over the interval.
type ConnSignals struct {
	// Ready reports whether the connection is READY at the interval's end.
	Ready bool
	// InFlight counts its unary RPCs and open streams at the interval's
	// end.
	InFlight int64
	// WriteWait is how long RPCs waited inside the client before the
	// connection's next socket write began: the mean over the interval's
	// writes, or the age of the oldest RPC still waiting (or of a write
	// still blocked) if that is longer. Zero when no RPC waited.
	WriteWait time.Duration
	// Completed counts the RPCs that ended on it during the interval.
	Completed uint64
}

// Throughput is the RPCs completed per second over the interval, all
// connections together.
func (s Signals) Throughput() float64 { return rate(float64(s.completed()), s.Interval) }

// Latency is the mean time in flight of the RPCs over the interval (0
// when none completed): their summed time in flight over the RPCs
// completed.
func (s Signals) Latency() time.Duration { return perRPC(s.spent(), float64(s.completed())) }

func (s Signals) completed() uint64 {
	var n uint64
	for _, c := range s.Conns {
		n += c.Completed
	}
	return n
}

// spent is the RPCs' summed time in flight over the interval: the mean
// RPCs in flight times the interval (Little's law). The pool reads the
// count several times an interval rather than time each RPC, which would
// cost two clock reads per RPC on the RPC path.
func (s Signals) spent() time.Duration { return time.Duration(s.Mean() * float64(s.Interval)) }

// MaxWriteWait is the longest WriteWait of the connections.
func (s Signals) MaxWriteWait() time.Duration {
	var w time.Duration
	for _, c := range s.Conns {
		w = max(w, c.WriteWait)
	}
	return w
}

// InFlight is the RPCs in flight on all connections at the interval's end.
func (s Signals) InFlight() int64 {
	var n int64
	for _, c := range s.Conns {
		n += c.InFlight
	}
	return n
}

// Mean is MeanInFlight, or InFlight when the pool took no read.
func (s Signals) Mean() float64 {
	if s.Reads == 0 {
		return float64(s.InFlight())
	}
	return s.MeanInFlight
}

// Peak is the most RPCs in flight over the interval: PeakInFlight, or
// InFlight at its end if that is more.
func (s Signals) Peak() int64 { return max(s.PeakInFlight, s.InFlight()) }

// AllReady reports whether every connection is READY.
func (s Signals) AllReady() bool {
	for _, c := range s.Conns {
		if !c.Ready {
			return false
		}
	}
	return true
}

// perRPC is spent over n RPCs, 0 for none.
func perRPC(spent time.Duration, n float64) time.Duration {
	if n < 1 {
		return 0
	}
	return time.Duration(float64(spent) / n)
}

// rate is n RPCs over d in RPC/s, 0 over no time.
func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}
