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
	// Arrival is Constant (the default) or Poisson (open only).
	Arrival string
	// Pacing is how the scheduler waits for each send (open only; see
	// OpenSpec.Pacing): PrecisePacing by default, or TimerPacing.
	Pacing string
	// MaxOutstanding bounds the open load's calls in flight, 1..100000.
	MaxOutstanding int
	// Seed fixes Poisson schedules (0: a fixed default).
	Seed uint64
	// Drain bounds how long an open step's calls still in flight at the
	// end of its interval are waited for (default 2 s, or Spec.RPCTimeout
	// if larger); a Live run has no end and drains nothing.
	Drain time.Duration
	// MaxRPS caps a closed load's rate (0: no cap): each caller waits out
	// its share, MaxRPS/Inflight, between calls.
	MaxRPS float64
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
	return l.checkOpen()
}

// checkOpen checks an open load's settings but its rate (OpenSpec.Validate
// checks its rates, validate the one rate of a step).
func (l *Load) checkOpen() error {
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
func (l *Load) arrival() string {
	if l.Arrival == "" {
		return Constant
	}
	return l.Arrival
}

// pacing is the pacing that runs: Pacing, PrecisePacing by default, and
// TimerPacing where there is no kernel timer to use.
func (l *Load) pacing() string {
	if l.Pacing == TimerPacing || !kernelPacing {
		return TimerPacing
	}
	return PrecisePacing
}

// drain is how long RPCs in flight at the interval's end are waited for.
func (l *Load) drain(spec *Spec) time.Duration {
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
