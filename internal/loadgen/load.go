// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"math"
	"time"

	"github.com/rpclab/rpclab/internal/usage"
)

// Load is a step's load model, how its calls are offered, on one machine
// and on a worker alike (StartLive). With Rate 0 it is closed: each of
// the step's Inflight callers keeps one call in flight, starting each at
// most every Inflight/MaxRPS (MaxRPS 0: at once). With Rate > 0 it is
// open: calls are sent at Arrival's times, Rate a second, whatever the
// replies: one scheduler hands each to an idle caller of the dispatcher,
// starting a new one when none is idle, up to MaxOutstanding; latency
// counts from the intended send time (coordinated-omission free). Both
// wait through the one pacer (a Pacer's offsets, waited for on a clock).
type Load struct {
	// Rate is the open load's offered calls per second (0: closed).
	Rate float64
	// OpenLoop is how the open load offers them (unread when closed).
	OpenLoop
	// MaxRPS caps a closed load's rate (0: no cap): each caller waits out
	// its share, MaxRPS/Inflight, between calls, and never catches up on
	// calls a slow reply held back (capDue).
	MaxRPS float64
}

// OpenLoop is how an open load offers its calls, its rate aside: the one
// home of these settings, which a step's Load and a sweep's OpenSpec (one
// step per rate) both hold.
type OpenLoop struct {
	// Arrival is Constant (the default) or Poisson.
	Arrival string
	// Pacing is how the scheduler waits for each send: PrecisePacing (the
	// default on Linux: a Go timer, with a kernel timer (timerfd) armed
	// for the same time to wake the runtime's netpoller then; sends leave
	// within tens of µs of their time) or TimerPacing (Go's timers only:
	// they wake an idle client up to about 1 ms late, since the
	// netpoller waits in whole milliseconds; a wake-up shared by the
	// sends due within it, so cheaper). The record says which ran
	// ("timer" where the kernel timer is not available).
	Pacing string
	// MaxOutstanding bounds the RPCs in flight, 1..100000 (rpclab's
	// default is DefaultMaxOutstanding; 0 is an error, not a default).
	// When the schedule needs more, the next send waits for one to end:
	// its latency still counts from its intended time, and the wait is
	// counted in the record's max_outstanding_hits.
	MaxOutstanding int
	// Seed fixes Poisson schedules (0: a fixed default).
	Seed uint64
	// Drain bounds how long RPCs still in flight at the end of the
	// interval are waited for (default 2 s, or Spec.RPCTimeout if
	// larger); those still running then are counted as DeadlineExceeded.
	// A Live run has no end and drains nothing.
	Drain time.Duration
}

// open says whether l is an open schedule.
func (l *Load) open() bool { return l.Rate > 0 }

// validate checks l for step's RPCs; a *usage.Error names the setting.
func (l *Load) validate(step Step) error {
	switch {
	case l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0):
		return usage.Errorf(ErrRate, "%v is not a rate of RPCs per second", l.Rate)
	case l.MaxRPS < 0 || math.IsNaN(l.MaxRPS) || math.IsInf(l.MaxRPS, 0):
		return usage.Errorf(ErrMaxRPS, "%v is not a rate (0: no cap)", l.MaxRPS)
	case !l.open():
		return nil
	case step.RPC != Unary:
		return usage.Errorf(ErrRate, "%v RPCs per second for %s RPCs (a rate paces unary RPCs only)", l.Rate, step.RPC)
	}
	if _, err := NewPacer(l.Arrival, l.Rate, 0); err != nil {
		return err
	}
	return l.OpenLoop.validate()
}

// validate checks an open load's settings but its rate (OpenSpec.Validate
// checks its rates, Load.validate the one rate of a step).
func (l *OpenLoop) validate() error {
	if _, err := NewPacer(l.Arrival, 1, 0); err != nil {
		return err
	}
	if l.Pacing != "" && l.Pacing != TimerPacing && l.Pacing != PrecisePacing {
		return usage.Errorf(ErrPacing, "unknown pacing %q (want %s or %s)", l.Pacing, TimerPacing, PrecisePacing)
	}
	if l.MaxOutstanding < 1 || l.MaxOutstanding > 100000 {
		return usage.Errorf(ErrMaxOutstanding, "%d is outside 1..100000", l.MaxOutstanding)
	}
	if l.Drain < 0 {
		return usage.Errorf(ErrDrain, "negative duration %v", l.Drain)
	}
	return nil
}

// arrival is the arrival process the record names.
func (l *OpenLoop) arrival() string {
	if l.Arrival == "" {
		return Constant
	}
	return l.Arrival
}

// pacing is the pacing that runs: Pacing, PrecisePacing by default, and
// TimerPacing where there is no kernel timer to use.
func (l *OpenLoop) pacing() string {
	if l.Pacing == TimerPacing || !kernelPacing {
		return TimerPacing
	}
	return PrecisePacing
}

// drain is how long RPCs in flight at the interval's end are waited for.
func (l *OpenLoop) drain(spec *Spec) time.Duration {
	if l.Drain > 0 {
		return l.Drain
	}
	return max(2*time.Second, spec.RPCTimeout)
}

// callerPacer is the pacer of one of inflight closed callers under the
// cap (nil: no cap): its share of MaxRPS, evenly spaced.
func (l *Load) callerPacer(inflight int) Pacer {
	if l.MaxRPS <= 0 {
		return nil
	}
	return &constantPacer{rate: l.MaxRPS / float64(inflight)}
}

// workloadOf is w, or spec's ping as rpc RPCs when w is nil.
func workloadOf(w Workload, spec *Spec, rpc string) Workload {
	if w != nil {
		return w
	}
	return PingWorkload(spec.Service, rpc, spec.PayloadBytes)
}
