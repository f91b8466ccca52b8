// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"testing"
	"time"
)

// failedAt is judging() after failed trials in a row from its size, the
// last back-off b.
func failedAt(failed int, b time.Duration) State {
	st := judging()
	st.Failed, st.Backoff = failed, b
	return st
}

// TestRuleSettle: each edge of Rule.SettleAfter in Rule.Decide. A judged
// trial that did not pay counts one more in a row from its size
// (State.Failed); at SettleAfter the back-off is MaxBackoff, and a limit
// held by it says the pool has settled (ReasonSettled). Anything that
// changes the size or the load starts the count again.
func TestRuleSettle(t *testing.T) {
	r := ruleM(2, 4) // settle after 2, cooldown 5s, max back-off 5m
	high := r.WriteWaitHigh
	at := t0.Add(r.Settle)
	noGain := sig(3, 2, high, 0.5, 316) // 948 RPC/s against the base's 1000
	gain := sig(3, 2, high, 0.5, 350)   // 1050
	never := func() Rule { r := r; r.SettleAfter = 0; return r }()
	three := func() Rule { r := r; r.SettleAfter = 3; return r }()
	tests := []struct {
		name   string
		r      Rule
		now    time.Time
		s      Signals
		st     State
		want   Decision
		failed int
		check  func(State) bool // nil: not checked
	}{
		{"the first failure counts one and backs off a cooldown", r, at, noGain, failedAt(0, 0), Decision{Shrink, ReasonNoGain}, 1,
			func(s State) bool { return s.Backoff == r.Cooldown && s.NextGrow.Equal(at.Add(r.Cooldown)) }},
		{"the second in a row settles: MaxBackoff", r, at, noGain, failedAt(1, r.Cooldown), Decision{Shrink, ReasonNoGain}, 2,
			func(s State) bool { return s.Backoff == r.MaxBackoff && s.NextGrow.Equal(at.Add(r.MaxBackoff)) }},
		{"one short of SettleAfter 3: the back-off doubles", three, at, noGain, failedAt(1, r.Cooldown), Decision{Shrink, ReasonNoGain}, 2,
			func(s State) bool { return s.Backoff == 2*r.Cooldown }},
		{"at SettleAfter 3: MaxBackoff", three, at, noGain, failedAt(2, 2*r.Cooldown), Decision{Shrink, ReasonNoGain}, 3,
			func(s State) bool { return s.Backoff == r.MaxBackoff }},
		{"SettleAfter 0 only doubles", never, at, noGain, failedAt(5, 10*time.Second), Decision{Shrink, ReasonNoGain}, 6,
			func(s State) bool { return s.Backoff == 20*time.Second }},
		{"a probe given back counts", r, at, sig(3, 2, high-1, 0.5, 316), func() State { s := probeAt(0); s.Failed = 1; return s }(), Decision{Shrink, ReasonNoGain}, 2,
			func(s State) bool { return s.Backoff == r.MaxBackoff }},
		{"a climb given back counts once", r, at, sig(3, 2, high-1, 0.5, 316), func() State { s := probeAt(2); s.Failed = 1; return s }(), Decision{Shrink, ReasonClimbGivenBack}, 2,
			func(s State) bool { return s.GiveBack == 2 && s.Backoff == r.MaxBackoff }},
		{"a gain starts the count again", r, at, gain, failedAt(1, r.Cooldown), Decision{Hold, ReasonGain}, 0,
			func(s State) bool { return s.Backoff == 0 }},

		// Holding on a limit: settled or cooling down, each side of the edge.
		{"settled: the limit waits", r, t0.Add(-1), sig(2, 2, high, 0.5, 100), State{NextGrow: t0, Failed: 2, Backoff: r.MaxBackoff}, Decision{Hold, ReasonSettled}, 2, nil},
		{"one failure: a cooldown, not settled", r, t0.Add(-1), sig(2, 2, high, 0.5, 100), State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown}, Decision{Hold, ReasonCooldown}, 1, nil},
		{"SettleAfter 0 never settles", never, t0.Add(-1), sig(2, 2, high, 0.5, 100), State{NextGrow: t0, Failed: 9, Backoff: r.MaxBackoff}, Decision{Hold, ReasonCooldown}, 9, nil},
		{"settled, the back-off passed: a trial", r, t0, sig(2, 2, high, 0.5, 100), State{NextGrow: t0, Failed: 2, Backoff: r.MaxBackoff}, Decision{Grow, ReasonLimit}, 2, nil},
		{"settled, the load rose by LoadRise: waived and counted again", r, t0, sig(2, 2, 0, 0.5, 750),
			State{NextGrow: t0.Add(time.Minute), Failed: 2, Backoff: r.MaxBackoff, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Grow, ReasonProbe}, 0,
			func(s State) bool { return s.Backoff == 0 && s.Trial }},
		{"one failure, the back-off passed, the load at LoadRise: a trial counted from 0", r, t0, sig(2, 2, 0, 0.5, 750),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 1000}, Decision{Grow, ReasonProbe}, 0, nil},
		{"one failure, the back-off passed, the load just under LoadRise: still one", r, t0, sig(2, 2, 0, 0.5, 749),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 1000}, Decision{Grow, ReasonProbe}, 1, nil},
		{"settled, the throughput at LoadRise at the same RPCs in flight (the host ran faster): still settled", r, t0, sig(2, 2, 0, 0.5, 750),
			State{NextGrow: t0.Add(time.Minute), Failed: 2, Backoff: r.MaxBackoff, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonSettled}, 2, nil},
		{"one failure, the back-off passed, the throughput at LoadRise at the same RPCs in flight: still one", r, t0, sig(2, 2, 0, 0.5, 750),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 1000, FailedInFlight: 4}, Decision{Grow, ReasonProbe}, 1, nil},
		// A backlog (State.backlogPast), as in the ramp here (ramp-final-3,
		// repeat 2): a trial failed at 20015 RPC/s with 53 in flight, and at
		// 60k offered one connection carried 22979 with 2000 in flight.
		{"one failure at a load the connection carried, then a backlog on it: a trial counted from 0", r, t0, read(sig(1, 2000, high, 0.7, 22979), 2000, 2000),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 20015, FailedInFlight: 53}, Decision{Grow, ReasonLimit}, 0, nil},
		{"one failure, then a backlog at a throughput fallen below the trial's: still one", r, t0, read(sig(1, 2000, high, 0.7, 20014), 2000, 2000),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 20015, FailedInFlight: 53}, Decision{Grow, ReasonLimit}, 1, nil},
		{"one failure, RPCs in flight at twice the trial's plus BacklogSlack: still one", r, t0, read(sig(1, 114, high, 0.7, 22979), 114, 114),
			State{NextGrow: t0, Failed: 1, Backoff: r.Cooldown, FailedRate: 20015, FailedInFlight: 53}, Decision{Grow, ReasonLimit}, 1, nil},
		{"settled, then a backlog: waived and counted again", r, t0, read(sig(1, 2000, high, 0.7, 22979), 2000, 2000),
			State{NextGrow: t0.Add(time.Minute), Failed: 2, Backoff: r.MaxBackoff, FailedRate: 20015, FailedInFlight: 53, LastChange: t0.Add(-r.Cooldown)}, Decision{Grow, ReasonLimit}, 0,
			func(s State) bool { return s.Backoff == 0 && s.Trial }},
		{"settled, the load just under LoadRise: still settled", r, t0, sig(2, 2, 0, 0.5, 749),
			State{NextGrow: t0.Add(time.Minute), Failed: 2, Backoff: r.MaxBackoff, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonSettled}, 2, nil},

		// Other changes of size or load.
		{"an idle shrink starts the count again", r, t0.Add(r.IdleFor), sig(3, 0, 0, 0.5, 0), State{IdleSince: t0, Failed: 2}, Decision{Shrink, ReasonIdle}, 0, nil},
		{"a fallen load starts the count again", r, t0.Add(r.FallFor), sig(3, 2, 0, 0.5, 200), State{KeptRate: 900, FellSince: t0, Failed: 2, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonLoadFell}, 0,
			func(s State) bool { return s.Trial && s.Recheck }},
		{"a recheck given back is one failure from the size below", r, at, sig(3, 2, high-1, 0.5, 349), func() State { s := recheckAt(); s.Failed = 1; return s }(), Decision{Shrink, ReasonRecheckGivenBack}, 1,
			func(s State) bool { return s.Backoff == r.Cooldown }},
		{"a backlog keeps the connection: counted again", r, t0.Add(2 * time.Second), unparked(sig(1, 29, high, 0.5, 300)), State{Trial: true, TrialStart: t0, BaseConns: 2, Phase: 1, StartInFlight: 10, Failed: 1}, Decision{Hold, ReasonBacklog}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, st := tc.r.Decide(tc.now, tc.s, tc.st)
			if d != tc.want || st.Failed != tc.failed {
				t.Fatalf("got %v/%v with %d failed, want %v/%v with %d", d.Action, d.Reason, st.Failed, tc.want.Action, tc.want.Reason, tc.failed)
			}
			if tc.check != nil && !tc.check(st) {
				t.Errorf("state %+v", st)
			}
		})
	}
}

// A trial the host's steal kept from being judged says nothing of the
// size: it backs off but is not counted.
func TestRuleSettleHostBusy(t *testing.T) {
	r := ruleM(1, 4)
	st := State{Trial: true, TrialStart: t0, BaseConns: 2, Failed: 1, StealSeen: true, Stolen: 2*int(r.TrialTime()/r.Interval) - 1}
	s := sig(3, 2, r.WriteWaitHigh, 0.5, 100)
	s.Steal = st.StealHi + 2*r.StealBand
	d, next := r.Decide(t0, s, st)
	if d.Reason != ReasonHostBusy || next.Failed != 1 || next.Backoff != r.Cooldown {
		t.Errorf("got %v with %d failed and back-off %v, want %v with 1 and %v", d.Reason, next.Failed, next.Backoff, ReasonHostBusy, r.Cooldown)
	}
}

func TestRuleSettleAfterInvalid(t *testing.T) {
	r := ruleM(1, 2)
	r.SettleAfter = -1
	if err := r.validate(); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("SettleAfter -1: got %v, want ErrInvalidOption", err)
	}
	r.SettleAfter = 0
	if err := r.validate(); err != nil {
		t.Errorf("SettleAfter 0: %v", err)
	}
}

// The policy alone, on a fake clock, at a steady load where a second
// connection never pays: after SettleAfter trials it stops trying for
// MaxBackoff, where a back-off that only doubles tries again and again.
func TestRuleSettleSteady(t *testing.T) {
	trials := func(r Rule) int {
		m := &sim{r: r, now: t0, size: 1}
		n := 0
		for i := 0; i < 240; i++ { // 4 minutes
			m.tick(t, sig(m.size, 8, time.Millisecond, 0.3, 1000/uint64(m.size)))
			if m.trail[len(m.trail)-1] == ReasonLimit {
				n++
				m.trail = append(m.trail, ReasonSettling) // count each start once
			}
		}
		if m.size != 1 {
			t.Errorf("size %d, want 1", m.size)
		}
		return n
	}
	r := ruleM(1, 4)
	never := r
	never.SettleAfter = 0
	settled, doubling := trials(r), trials(never)
	if settled != 2 || doubling < 5 {
		t.Errorf("trials in 4 minutes: %d settled, %d doubling; want 2 and at least 5", settled, doubling)
	}
}

// TestRuleLoadRoseProbe: a trial the load rose under (State.moved) keeps
// its connection only if RPCs waited to be written (a limit trial), or
// wait as it ends (Rule.waited), or it was a recheck; a probe, and any
// climb or jump from one, goes back unjudged and backs nothing off.
func TestRuleLoadRoseProbe(t *testing.T) {
	r := ruleM(1, 8)
	at := t0.Add(r.Settle)
	// A2 over A1 by more than LoadMoved, 2 RPCs in flight a connection.
	rising := took(sig(3, 2, r.WriteWaitHigh-time.Microsecond, 0.5, 4168), time.Millisecond)
	waiting := took(sig(3, 2, r.WriteWaitHigh, 0.5, 4168), time.Millisecond)
	uncrowded := took(sig(3, 1, time.Millisecond, 0.5, 4168), time.Millisecond)
	// A busy CPU (ruleM: CPUBusyMax 0.8): a wait must reach WriteWaitBusy.
	busyShort := took(sig(3, 2, r.WriteWaitBusy-time.Microsecond, 0.9, 4168), time.Millisecond)
	busyWaiting := took(sig(3, 2, r.WriteWaitBusy, 0.9, 4168), time.Millisecond)
	rose := func(f func(*State)) State {
		st := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
		st.Failed, st.Backoff = 1, r.Cooldown
		f(&st)
		return st
	}
	probe := func(s *State) { s.Probe = true }
	tests := []struct {
		name     string
		st       State
		s        Signals
		want     Decision
		giveBack int
	}{
		{"a limit trial: kept", rose(func(*State) {}), rising, Decision{Hold, ReasonLoadRose}, 0},
		{"a probe: given back", rose(probe), rising, Decision{Shrink, ReasonLoadRoseProbe}, 0},
		{"a probe, RPCs waiting to be written as it ends: kept", rose(probe), waiting, Decision{Hold, ReasonLoadRose}, 0},
		{"a probe, RPCs waiting but one in flight a connection: given back", rose(probe), uncrowded, Decision{Shrink, ReasonLoadRoseProbe}, 0},
		{"a probe, CPU busy, RPCs waiting short of WriteWaitBusy: given back", rose(probe), busyShort, Decision{Shrink, ReasonLoadRoseProbe}, 0},
		{"a probe, CPU busy, RPCs waiting WriteWaitBusy: kept", rose(probe), busyWaiting, Decision{Hold, ReasonLoadRose}, 0},
		{"a climb of two on trust: all given back", rose(func(s *State) { s.Probe, s.Plateau = true, 2 }), rising, Decision{Shrink, ReasonLoadRoseProbe}, 2},
		{"a climb of two on trust, RPCs waiting: all kept", rose(func(s *State) { s.Probe, s.Plateau = true, 2 }), waiting, Decision{Hold, ReasonLoadRose}, 0},
		{"a jump: all given back", rose(func(s *State) { s.Probe, s.Jump, s.Plateau = true, true, 4 }), rising, Decision{Shrink, ReasonLoadRoseProbe}, 4},
		{"a recheck: kept", rose(func(s *State) { s.Probe, s.Jump, s.Recheck = true, true, true }), rising, Decision{Hold, ReasonLoadRose}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, st := r.Decide(at, tc.s, tc.st)
			if d != tc.want || st.GiveBack != tc.giveBack || st.Trial || st.Plateau != 0 || st.Paying {
				t.Fatalf("got %v/%v give-back %d (trial %v plateau %d paying %v), want %v/%v give-back %d",
					d.Action, d.Reason, st.GiveBack, st.Trial, st.Plateau, st.Paying, tc.want.Action, tc.want.Reason, tc.giveBack)
			}
			if d.Reason == ReasonLoadRoseProbe && (st.Backoff != r.Cooldown || st.Failed != 1 || !st.NextGrow.Equal(at.Add(r.Cooldown)) || !st.Unjudged) {
				t.Errorf("given back unjudged: back-off %v, %d failed, next %v, unjudged %v; want them as they were (%v, 1), a cooldown, and unjudged", st.Backoff, st.Failed, st.NextGrow.Sub(at), st.Unjudged, r.Cooldown)
			}
			if d.Reason == ReasonLoadRose && st.Unjudged {
				t.Error("kept, and marked unjudged")
			}
		})
	}
}

// TestRuleUnjudgedCooldown: the cooldown after a probe given back unjudged
// as the load rose holds the next probe, but a connection that is the
// limit (RPCs crowd it and wait WriteWaitHigh to be written) grows the
// pool at once, as a limit trial; after a judged trial's give-back the
// cooldown holds a limit too. On the ramp's step from 20k RPC/s to 40k
// (ramp s-3) the pool sat on one connection for the whole cooldown.
func TestRuleUnjudgedCooldown(t *testing.T) {
	r := ruleM(1, 8)
	at := t0.Add(r.Settle)
	rising := took(sig(3, 2, r.WriteWaitHigh-time.Microsecond, 0.5, 4168), time.Millisecond)
	st := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
	st.Probe = true
	d, back := r.Decide(at, rising, st)
	if d != (Decision{Shrink, ReasonLoadRoseProbe}) {
		t.Fatalf("the probe: got %v/%v, want it given back unjudged", d.Action, d.Reason)
	}
	next := at.Add(time.Second)
	judged := back
	judged.Unjudged = false
	tests := []struct {
		name string
		st   State
		wait time.Duration
		per  int64 // RPCs in flight on the one connection
		want Decision
	}{
		{"unjudged, a limit: grows", back, r.WriteWaitHigh, 2, Decision{Grow, ReasonLimit}},
		{"unjudged, waits just short of a limit: held", back, r.WriteWaitHigh - time.Microsecond, 2, Decision{Hold, ReasonCooldown}},
		{"unjudged, waits with one RPC a connection: not a limit", back, r.WriteWaitHigh, 1, Decision{Hold, ReasonBalanced}},
		{"judged, a limit: held", judged, r.WriteWaitHigh, 2, Decision{Hold, ReasonCooldown}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			st.GiveBack = 0 // retired
			d, after := r.Decide(next, sig(1, tc.per, tc.wait, 0.5, 20000), st)
			if d != tc.want {
				t.Fatalf("got %v/%v, want %v/%v", d.Action, d.Reason, tc.want.Action, tc.want.Reason)
			}
			if d.Action == Grow && (!after.Trial || after.Probe || after.BaseConns != 1) {
				t.Errorf("grown: trial %v probe %v base %d; want a limit trial against 1", after.Trial, after.Probe, after.BaseConns)
			}
		})
	}
	// A limit trial that follows and fails backs off as any: its back-off
	// holds the next limit.
	st2 := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
	st2.Unjudged = back.Unjudged
	end := next.Add(r.TrialTime())
	d, failed := r.Decide(end, took(sig(3, 2, r.WriteWaitHigh, 0.5, 3333), time.Millisecond), st2)
	if d != (Decision{Shrink, ReasonNoGain}) {
		t.Fatalf("the limit trial after it: got %v/%v, want it given back for no gain", d.Action, d.Reason)
	}
	if d, _ := r.Decide(end.Add(time.Second), sig(1, 2, r.WriteWaitHigh, 0.5, 20000), failed); d != (Decision{Hold, ReasonCooldown}) {
		t.Errorf("a limit within that trial's back-off: got %v/%v, want it held", d.Action, d.Reason)
	}
	// Past the cooldown a probe starts as it would.
	if d, _ := r.Decide(at.Add(r.Cooldown), sig(1, 2, 0, 0.5, 20000), back); d != (Decision{Grow, ReasonProbe}) {
		t.Errorf("past the cooldown: got %v/%v, want a probe", d.Action, d.Reason)
	}
}

// TestRuleLimitOnRiseOff: without Rule.LimitOnRise a probe the load rose
// under goes back even with RPCs waiting to be written, and the cooldown
// after it holds a limit, as before 2026-12-02.
func TestRuleLimitOnRiseOff(t *testing.T) {
	r := ruleM(1, 8)
	r.LimitOnRise = false
	at := t0.Add(r.Settle)
	st := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
	st.Probe = true
	d, back := r.Decide(at, took(sig(3, 2, r.WriteWaitHigh, 0.5, 4168), time.Millisecond), st)
	if d != (Decision{Shrink, ReasonLoadRoseProbe}) {
		t.Fatalf("a probe with RPCs waiting: got %v/%v, want it given back unjudged", d.Action, d.Reason)
	}
	back.GiveBack = 0
	if d, _ := r.Decide(at.Add(time.Second), sig(1, 2, r.WriteWaitHigh, 0.5, 20000), back); d != (Decision{Hold, ReasonCooldown}) {
		t.Errorf("a limit within its cooldown: got %v/%v, want it held", d.Action, d.Reason)
	}
}
