// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package adapt

import (
	"fmt"
	"time"
)

// Rule is the adaptive pool's policy and its settings. The pool tries one
// more connection when a connection may be the limit: RPCs wait to be
// written, or RPCs queue on the connections (more in flight than one per
// connection); it keeps the connection only if a paired trial measures a
// gain, and gives connections back once the RPCs in flight would fit one
// connection fewer, at most one each. Decide is a pure function; the
// pool calls it once per Interval.
type Rule struct {
	// Min and Max bound the number of connections.
	Min, Max int
	// Interval is how often the pool samples its signals and decides
	// (default 1s).
	Interval time.Duration
	// WriteWait: RPCs that wait at least this long before their
	// connection's next socket write mark a limit (default 100µs). An
	// unloaded connection writes within tens of µs of an RPC's start; a
	// saturated one batches what queued while it wrote.
	WriteWait time.Duration
	// Queue: RPCs queue on the connections when their mean in flight
	// exceeds one per connection by at least this (default 0.5; 0 never).
	// A connection that serves one RPC at a time (a server's limit on
	// concurrent streams) holds the others inside grpc-go, where no write
	// waits; by Little's law their time in flight then grows with their
	// number while the throughput does not, which only a trial can tell
	// from a client that is busy, so a queue starts a trial and the
	// trial's back-off bounds how often.
	Queue float64
	// Trial is how long a trial is measured, rounded up to whole blocks
	// of four intervals (default 12s: three B A A B blocks; one block
	// alone swings by a fifth on a busy host).
	Trial time.Duration
	// MinGain is the relative gain, in throughput or in the RPCs' time in
	// flight, that keeps a trial's connection (default 0.05).
	MinGain float64
	// Cooldown is the first back-off after a trial that did not pay; each
	// one after it doubles, up to MaxBackoff (defaults 5s and 5m). It is
	// also the wait between two give-backs once no RPC is left at all.
	Cooldown, MaxBackoff time.Duration
	// LoadRise waives a back-off once the mean RPCs in flight reach this
	// many times those of the trial that failed (default 1.5; 0 never):
	// that trial judged a load that has passed.
	LoadRise float64
	// IdleFor is how long the RPCs in flight must fit one connection fewer
	// before the pool gives one back (default 30s).
	IdleFor time.Duration
	// StealBand: a trial leaves out an interval whose host steal strays
	// by more than this from its other intervals' (default 0.05; 0 never).
	StealBand float64
}

// DefaultRule is the Rule WithAdaptive uses, with its bounds.
func DefaultRule(minConns, maxConns int) Rule {
	return Rule{
		Min: minConns, Max: maxConns,
		Interval:   time.Second,
		WriteWait:  100 * time.Microsecond,
		Queue:      0.5,
		Trial:      12 * time.Second,
		MinGain:    0.05,
		Cooldown:   5 * time.Second,
		MaxBackoff: 5 * time.Minute,
		LoadRise:   1.5,
		IdleFor:    30 * time.Second,
		StealBand:  0.05,
	}
}

// Validate reports a setting out of range; maxSize bounds Max.
func (r Rule) Validate(maxSize int) error {
	switch {
	case r.Min < 1:
		return fmt.Errorf("min %d must be at least 1", r.Min)
	case r.Max < r.Min:
		return fmt.Errorf("max %d must be at least min %d", r.Max, r.Min)
	case r.Max > maxSize:
		return fmt.Errorf("max %d is above %d (MaxSize)", r.Max, maxSize)
	case r.Interval <= 0:
		return fmt.Errorf("interval %v must be positive", r.Interval)
	case r.WriteWait < 0, r.Trial < 0, r.Cooldown < 0, r.IdleFor < 0:
		return fmt.Errorf("durations must not be negative")
	case r.MaxBackoff < r.Cooldown:
		return fmt.Errorf("max back-off %v is below the cooldown %v", r.MaxBackoff, r.Cooldown)
	case !(r.Queue >= 0):
		return fmt.Errorf("queue %v must not be negative", r.Queue)
	case !(r.MinGain >= 0):
		return fmt.Errorf("min gain %v must not be negative", r.MinGain)
	case r.LoadRise != 0 && !(r.LoadRise > 1):
		return fmt.Errorf("load rise %v must be above 1 (or 0: never)", r.LoadRise)
	case !(r.StealBand >= 0 && r.StealBand <= 1):
		return fmt.Errorf("steal band %v must be within [0, 1]", r.StealBand)
	}
	return nil
}

// TrialTime is how long a trial is measured: Trial rounded up to whole
// blocks of four intervals, at least one.
func (r Rule) TrialTime() time.Duration {
	block := 4 * r.Interval
	return max(1, (r.Trial+block-1)/block) * block
}

// SettleTime is how long a pool sized by r needs, with inflight RPCs kept
// in flight from its start, to grow from Min to the size it can reach at
// that count (one connection per RPC in flight, at most Max) if each
// connection it tries is kept: one interval before the first trial, then
// per connection its trial and the interval that starts the next. Zero
// when the pool cannot grow. A measurement of the pool warms up at least
// this long.
func (r Rule) SettleTime(inflight int) time.Duration {
	adds := min(inflight, r.Max) - r.Min
	if adds <= 0 {
		return 0
	}
	return r.Interval + time.Duration(adds)*(r.TrialTime()+r.Interval)
}

// SettleWait is the most a measurement waits past SettleTime for a trial
// under way to end (Pool.Settling): a trial, and as long again for the
// intervals it may leave out for steal. 24s for DefaultRule.
func (r Rule) SettleWait() time.Duration { return 2 * r.TrialTime() }

// Phase is the state of the policy's state machine.
type Phase int

const (
	// Steady: the size holds; a limit starts a trial, RPCs in flight
	// that fit one connection fewer start giving back.
	Steady Phase = iota
	// Trial: the newest connection is on trial (State.T).
	Trial
	// GivingBack: the RPCs in flight fit one connection fewer since
	// State.IdleSince; one connection goes back each IdleFor.
	GivingBack
)

// State is what Decide remembers between intervals. The zero value is the
// state of a new pool.
type State struct {
	Phase Phase
	// T is the trial under way (Phase Trial).
	T TrialState
	// NextGrow is the earliest time of the next trial; Backoff the wait
	// after the last failed trial (zero after one that paid), and
	// FailedInFlight the mean RPCs in flight over that trial (LoadRise).
	NextGrow       time.Time
	Backoff        time.Duration
	FailedInFlight float64
	// IdleSince is when the pool started giving back (Phase GivingBack).
	IdleSince time.Time
	// Verdict is the trial this decision judged (Judged false: none).
	Verdict Verdict
}

// active is how many connections take new RPCs over the next interval
// (0: all): the trial's base while its new connection is parked.
func (st State) active() int {
	if st.Phase == Trial && st.T.parked() {
		return st.T.Base
	}
	return 0
}

// Decide is the policy: from the signals of the last interval, the time
// now and the state the previous call left, it returns the decision and
// the next state. It reads no clock and keeps nothing outside State.
func (r Rule) Decide(now time.Time, s Signals, st State) (Decision, State) {
	st.Verdict = Verdict{}
	if !s.AllReady() {
		return r.notReady(st)
	}
	switch st.Phase {
	case Trial:
		return r.trial(now, s, st)
	case GivingBack:
		return r.givingBack(now, s, st)
	default:
		return r.steady(now, s, st)
	}
}

// notReady judges nothing on a broken pool (a dead server is not a
// capacity signal); a trial measures again from the start once every
// connection is back.
func (r Rule) notReady(st State) (Decision, State) {
	switch st.Phase {
	case Trial:
		st.T = st.T.restart()
	case GivingBack:
		st.Phase = Steady
	}
	return Decision{Hold, ReasonNotReady}, st
}

// steady: a limit or a queue starts a trial of one more connection,
// unless the pool is at Max or a back-off holds; RPCs in flight that fit
// one connection fewer start giving back.
func (r Rule) steady(now time.Time, s Signals, st State) (Decision, State) {
	n := len(s.Conns)
	if why := r.candidate(s); why != "" {
		switch {
		case n >= r.Max:
			return Decision{Hold, ReasonAtMax}, st
		case now.Before(st.NextGrow) && !r.loadRose(s, st):
			return Decision{Hold, ReasonBackoff}, st
		}
		st.Phase, st.T = Trial, newTrial(n, s.Peak())
		return Decision{Grow, why}, st
	}
	if r.idle(s) && n > r.Min {
		st.Phase, st.IdleSince = GivingBack, now
		return Decision{Hold, ReasonIdleWait}, st
	}
	return Decision{Hold, ReasonBalanced}, st
}

// limit: RPCs waited WriteWait to be written while more than one RPC was
// in flight per connection on the mean: a connection is the limit.
func (r Rule) limit(s Signals) bool {
	return s.Mean() > float64(len(s.Conns)) && s.MaxWriteWait() >= r.WriteWait
}

// candidate is why one more connection may carry more (ReasonLimit,
// ReasonQueue), or "" if nothing says so.
func (r Rule) candidate(s Signals) string {
	switch {
	case r.limit(s):
		return ReasonLimit
	case r.queue(s):
		return ReasonQueue
	}
	return ""
}

// queue: the mean RPCs in flight exceed one per connection by Queue, so
// at least one connection holds RPCs that wait for it.
func (r Rule) queue(s Signals) bool {
	return r.Queue > 0 && s.Mean() >= float64(len(s.Conns))+r.Queue
}

// idle: no RPC waited to be written and the mean RPCs in flight fit one
// connection fewer, at most one each.
func (r Rule) idle(s Signals) bool {
	return s.MaxWriteWait() < r.WriteWait && s.Mean() <= float64(len(s.Conns)-1)
}

// loadRose: the load has risen past the one the last failed trial judged.
func (r Rule) loadRose(s Signals, st State) bool {
	return r.LoadRise > 0 && st.FailedInFlight > 0 && s.Mean() >= r.LoadRise*st.FailedInFlight
}

// trial measures the trial's intervals and judges it once TrialTime has
// been measured. A park the RPCs queued past (the guard gave the parked
// connection back early) keeps the connection at once: the base size
// could not carry the load.
func (r Rule) trial(now time.Time, s Signals, st State) (Decision, State) {
	if s.Unparked && st.T.parked() {
		return r.kept(st, ReasonQueued)
	}
	t, out := st.T.steal(r.StealBand, s.Steal)
	st.T = t
	if out {
		if t.Stolen >= 2*int(r.TrialTime()/r.Interval) {
			return r.failed(now, st, ReasonHostBusy, 0)
		}
		return Decision{Hold, ReasonStolen}, st // the same side again
	}
	st.T = st.T.add(s)
	if !st.T.done(r) {
		return Decision{Hold, ReasonTrial}, st
	}
	v := st.T.judge(r.MinGain)
	switch {
	case v.Gain:
		d, st := r.kept(st, ReasonGain)
		st.Verdict = v
		return d, st
	case v.Faster:
		d, st := r.kept(st, ReasonFaster)
		st.Verdict = v
		return d, st
	}
	d, st := r.failed(now, st, ReasonNoGain, st.T.meanInFlight())
	st.Verdict = v
	return d, st
}

// kept ends a trial that paid: the back-off resets and the next trial may
// start at the next interval.
func (r Rule) kept(st State, why string) (Decision, State) {
	st.Phase, st.T, st.Backoff, st.FailedInFlight = Steady, TrialState{}, 0, 0
	return Decision{Hold, why}, st
}

// failed ends a trial that did not pay: its connection goes back and the
// next trial waits a doubled back-off.
func (r Rule) failed(now time.Time, st State, why string, inflight float64) (Decision, State) {
	st.Phase, st.T = Steady, TrialState{}
	st = r.backOff(now, st, inflight)
	return Decision{Shrink, why}, st
}

// GrowFailed is the state after a Grow whose connection did not get READY:
// the trial ends and the next one waits a doubled back-off.
func (r Rule) GrowFailed(now time.Time, st State) State {
	st.Phase, st.T = Steady, TrialState{}
	return r.backOff(now, st, 0)
}

func (r Rule) backOff(now time.Time, st State, inflight float64) State {
	st.FailedInFlight = inflight
	st.Backoff = min(max(2*st.Backoff, r.Cooldown), r.MaxBackoff)
	st.NextGrow = now.Add(st.Backoff)
	return st
}

// givingBack: while the RPCs in flight fit one connection fewer, one
// connection goes back each IdleFor (each Cooldown once no RPC is left at
// all); a load that returns, or the min, ends it.
func (r Rule) givingBack(now time.Time, s Signals, st State) (Decision, State) {
	n := len(s.Conns)
	if !r.idle(s) || n <= r.Min {
		st.Phase = Steady
		return r.steady(now, s, st)
	}
	if now.Sub(st.IdleSince) < r.IdleFor {
		return Decision{Hold, ReasonIdleWait}, st
	}
	st.IdleSince = now
	if s.Peak() == 0 && s.completed() == 0 {
		st.IdleSince = now.Add(min(r.Cooldown, r.IdleFor) - r.IdleFor)
	}
	if n-1 <= r.Min {
		st.Phase = Steady
	}
	return Decision{Shrink, ReasonIdle}, st
}
