// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package adapt is the adaptive pool's core: the signals it measures
// (Signals), the policy that sizes it (Rule, a state machine of three
// states: steady, trial, giving back), the paired trial that judges a
// connection, and the Sizer interface through which the pool applies any
// policy. It reads no clock and touches no connection: the pool samples
// the signals, calls a Sizer once per interval and applies the decision.
package adapt

import (
	"strconv"
	"time"
)

// Action is what a decision does to the pool's size.
type Action int

const (
	// Hold keeps the size.
	Hold Action = iota
	// Grow adds one connection (it takes RPCs once READY).
	Grow
	// Shrink retires the newest connection (its RPCs finish on it first).
	Shrink
)

// String names the action.
func (a Action) String() string {
	switch a {
	case Hold:
		return "hold"
	case Grow:
		return "grow"
	case Shrink:
		return "shrink"
	default:
		return "Action(" + strconv.Itoa(int(a)) + ")"
	}
}

// Decision is one output of a Sizer: what to do and why, in words a
// reader of the pool's history understands.
type Decision struct {
	Action Action
	Reason string
}

// The reasons Rule gives, and the two the pool itself gives.
const (
	ReasonLimit      = "RPCs wait to be written: trying one more connection"
	ReasonQueue      = "RPCs queue on the connections: trying one more connection"
	ReasonTrial      = "trial: measuring with and without the new connection"
	ReasonGain       = "kept: throughput rose with the new connection"
	ReasonFaster     = "kept: RPCs took less time with the new connection"
	ReasonQueued     = "kept: RPCs queued without the new connection"
	ReasonNoGain     = "given back: no measured gain"
	ReasonStolen     = "interval left out: the host's steal moved"
	ReasonHostBusy   = "given back unjudged: the host's steal kept moving"
	ReasonBalanced   = "no connection is the limit"
	ReasonAtMax      = "a connection may be the limit but the pool is at its max"
	ReasonBackoff    = "a connection may be the limit but the back-off has not passed"
	ReasonNotReady   = "a connection is not ready: nothing judged"
	ReasonIdleWait   = "the RPCs in flight fit one connection fewer: waiting"
	ReasonIdle       = "given back: the RPCs in flight fit one connection fewer"
	ReasonGrowFailed = "new connection not ready in time"
)

// Sizer decides an adaptive pool's size. The pool calls Size once per
// interval from its one control goroutine, with the signals of the
// interval, and applies the decision: Grow adds one connection (it takes
// RPCs once READY), Shrink retires the newest (its RPCs finish on it). A
// Sizer may keep state between calls; it is never called concurrently.
// The pool keeps the size within its min and max whatever Size returns.
type Sizer interface {
	Size(now time.Time, s Signals) Decision
	// GrowFailed tells the Sizer that the connection its last Grow asked
	// for did not get READY in time and was closed.
	GrowFailed(now time.Time)
}

// Changer is a Sizer that can tell it is part-way through a change of
// size (Pool.Settling). A Sizer without the method never is.
type Changer interface {
	Changing() bool
}

// Parker is a Sizer that parks connections: Active is how many of the
// first connections take new RPCs over the next interval (0: all), and
// ParkLimit the RPCs in flight past which the pool gives the parked ones
// back before the interval ends (0: never).
type Parker interface {
	Active() int
	ParkLimit() int64
}

// Judger is a Sizer that reports the throughputs (RPC/s) its last
// decision judged a trial on, with the new connection and without it
// (ok false: that decision judged none), and its back-off.
type Judger interface {
	Judged() (with, without float64, ok bool)
	Backoff() time.Duration
}

// RuleSizer is Rule as a Sizer: Rule.Decide with its State.
type RuleSizer struct {
	R  Rule
	St State
}

var (
	_ Sizer   = (*RuleSizer)(nil)
	_ Changer = (*RuleSizer)(nil)
	_ Parker  = (*RuleSizer)(nil)
	_ Judger  = (*RuleSizer)(nil)
)

// Size is Rule.Decide on the sizer's state.
func (s *RuleSizer) Size(now time.Time, sig Signals) Decision {
	d, st := s.R.Decide(now, sig, s.St)
	s.St = st
	return d
}

// GrowFailed is Rule.GrowFailed on the sizer's state.
func (s *RuleSizer) GrowFailed(now time.Time) { s.St = s.R.GrowFailed(now, s.St) }

// Changing reports a trial under way.
func (s *RuleSizer) Changing() bool { return s.St.Phase == Trial }

// Active is the trial's base size while its new connection is parked.
func (s *RuleSizer) Active() int { return s.St.active() }

// ParkLimit is the park guard's limit while a connection is parked.
func (s *RuleSizer) ParkLimit() int64 {
	if s.St.active() == 0 {
		return 0
	}
	return s.St.T.parkLimit()
}

// Judged is the last decision's verdict, if it judged a trial.
func (s *RuleSizer) Judged() (with, without float64, ok bool) {
	v := s.St.Verdict
	return v.With, v.Without, v.Judged
}

// Backoff is the wait before the next trial after a failed one.
func (s *RuleSizer) Backoff() time.Duration { return s.St.Backoff }
