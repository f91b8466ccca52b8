// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// The machine's own /proc/stat: a steal count within its total, and a
// share read once the host's CPUs have counted MinStealTime.
func TestHostSteal(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, _, ok := hostSteal(); ok {
			t.Fatal("hostSteal read a count outside Linux")
		}
		t.Skip("steal is read on Linux only")
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat:", err)
	}
	steal, total, ok := hostSteal()
	if !ok || steal > total {
		t.Fatalf("hostSteal: got steal %d of %d, ok %v", steal, total, ok)
	}
	m := newStealMeter(hostSteal)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		// The kernel's tick counts a CPU's time every 10ms: this waits
		// for the clock, not for another goroutine.
		time.Sleep(50 * time.Millisecond)
		_, now, _ := hostSteal()
		if now >= total+2*MinStealTime {
			break
		}
	}
	if share := m.sample(); share < 0 || share > 1 {
		t.Errorf("steal share over at least %v of CPU time: got %v, want one in [0, 1]", MinStealTime, share)
	}
}

func TestStealMeter(t *testing.T) {
	type read struct {
		steal, total uint64
		ok           bool
	}
	reads := []read{{100, 10000, true}}
	// The kernel's counts, in its clock ticks of 10ms.
	const tick = 10 * time.Millisecond
	minTicks := uint64(MinStealTime / tick)
	m := newStealMeter(func() (time.Duration, time.Duration, bool) {
		r := reads[0]
		return time.Duration(r.steal) * tick, time.Duration(r.total) * tick, r.ok
	})
	for _, tc := range []struct {
		name string
		r    read
		want float64
	}{
		{"30 of 200 ticks", read{130, 10200, true}, 0.15},
		{"none of 200", read{130, 10400, true}, 0},
		{"all of 100", read{230, 10500, true}, 1},
		{"MinStealTime: read", read{235, 10500 + minTicks, true}, 5.0 / float64(minTicks)},
		{"one tick less: unknown", read{236, 10500 + 2*minTicks - 1, true}, -1},
		{"the total went back: unknown", read{236, 5000, true}, -1},
		{"the steal went back: unknown", read{100, 6000, true}, -1},
		{"unreadable: unknown", read{0, 0, false}, -1},
		{"the first read after an unreadable one: unknown", read{200, 8000, true}, -1},
		{"then read again", read{210, 8100, true}, 0.1},
	} {
		reads[0] = tc.r
		if got := m.sample(); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The pool's control loop reads the host's steal into each interval's
// signals and its events.
func TestSignalsSteal(t *testing.T) {
	var steal, total time.Duration
	reader := func(c *config) error {
		c.steal = func() (time.Duration, time.Duration, bool) {
			steal, total = steal+300*time.Millisecond, total+time.Second
			return steal, total, true
		}
		return nil
	}
	srv := startServer(t)
	fc := newFakeClock()
	p := newPool(t, srv.addr, WithAdaptiveRule(testRule(1, 1)), fc.option(), reader)
	ctx := t.Context()
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if s := p.sample(fc.advance(time.Second)); s.Steal != 0.3 {
		t.Errorf("signals: got steal %v, want 0.3", s.Steal)
	}
	if e := fc.step(ctx, t, p); e.Steal != 0.3 {
		t.Errorf("event: got steal %v, want 0.3", e.Steal)
	}
}

// stolenAt is s with the host's steal share over its interval.
func stolenAt(s Signals, steal float64) Signals { s.Steal = steal; return s }

// TestRuleSteal: each edge of Rule.StealBand and of the trial's cap on
// the intervals it leaves out.
func TestRuleSteal(t *testing.T) {
	r := ruleM(1, 4)
	r.StealBand = 0.25 // exact in binary, as are the shares below
	// A trial on its second interval (its base's first, 2 connections
	// taking RPCs), having counted one at a steal of 0.5.
	mid := State{Trial: true, TrialStart: t0, BaseConns: 2, Phase: 1, Active: 2, StealLo: 0.5, StealHi: 0.5, StealSeen: true,
		TrialRPCs: 3000, TrialTime: time.Second}
	mid.Pairs[0][0] = Side{RPCs: 3000, Time: time.Second}
	s := sig(3, 2, r.WriteWaitHigh, 0.5, 1000)
	now := t0.Add(2 * time.Second)
	counted := func(lo, hi float64) func(State) bool {
		return func(st State) bool {
			return st.Phase == 2 && st.BaseRPCs == 3000 && st.Stolen == 0 && st.StealLo == lo && st.StealHi == hi
		}
	}
	left := func(st State) bool {
		return st.Phase == 1 && st.Active == 2 && st.BaseRPCs == 0 && st.Stolen == 1 && st.Trial && st.StealLo == 0.5
	}
	capped := mid
	capped.Stolen = 2*int(r.TrialTime()/r.Interval) - 1
	climb := capped
	climb.Probe, climb.Plateau = true, 2
	recheck := capped
	recheck.Recheck, recheck.FellSince, recheck.KeptRate = true, t0, 9000
	for _, tc := range []struct {
		name   string
		r      Rule
		s      Signals
		st     State
		want   Decision
		wantSt func(State) bool
	}{
		{"a steal at the band's top: counted", r, stolenAt(s, 0.75), mid, Decision{Hold, ReasonSettling}, counted(0.5, 0.75)},
		{"just above it: left out, the side measured again", r, stolenAt(s, 0.7500001), mid, Decision{Hold, ReasonStolen}, left},
		{"a steal at the band's bottom: counted", r, stolenAt(s, 0.25), mid, Decision{Hold, ReasonSettling}, counted(0.25, 0.5)},
		{"just below it: the counted interval was the stolen one, measured again", r, stolenAt(s, 0.2499999), mid, Decision{Hold, ReasonStolen},
			func(st State) bool {
				return st.Trial && st.Phase == 0 && st.Active == 0 && st.Pairs == [2][2]Side{} && st.TrialRPCs == 0 && !st.StealSeen && st.Stolen == 1
			}},
		{"an unknown steal: counted, the band kept", r, stolenAt(s, -1), mid, Decision{Hold, ReasonSettling}, counted(0.5, 0.5)},
		{"the band off: any steal counted", func() Rule { r := r; r.StealBand = 0; return r }(), stolenAt(s, 1), mid, Decision{Hold, ReasonSettling}, counted(0.5, 0.5)},
		{"the trial's first interval sets the band", r, stolenAt(s, 0.9), State{Trial: true, TrialStart: t0, BaseConns: 2}, Decision{Hold, ReasonSettling},
			func(st State) bool { return st.Phase == 1 && st.StealSeen && st.StealLo == 0.9 && st.StealHi == 0.9 }},
		{"one short of the cap: left out", r, stolenAt(s, 1), func() State { st := capped; st.Stolen--; return st }(), Decision{Hold, ReasonStolen}, nil},
		{"at the cap: given back unjudged, backed off", r, stolenAt(s, 1), capped, Decision{Shrink, ReasonHostBusy},
			func(st State) bool {
				return !st.Trial && st.Stolen == 0 && st.Active == 0 && st.Backoff == r.Cooldown && st.FailedRate == 0 && !st.Judged &&
					st.NextGrow.Equal(now.Add(r.Cooldown)) && st.GiveBack == 0
			}},
		{"at the cap on a climb: those on trust go back too", r, stolenAt(s, 0), climb, Decision{Shrink, ReasonHostBusy},
			func(st State) bool { return st.GiveBack == 2 && st.Plateau == 0 && !st.Probe }},
		{"at the cap on a recheck: the newest stays, nothing judged", r, stolenAt(s, 1), recheck, Decision{Hold, ReasonHostBusy},
			func(st State) bool {
				return !st.Trial && !st.Recheck && st.FellSince.IsZero() && st.KeptRate == 9000 && st.Backoff == 0 && st.NextGrow.Equal(now.Add(r.Cooldown))
			}},
		{"a stolen base interval the park guard ended: a backlog all the same", r, unparked(stolenAt(s, 1)), mid, Decision{Hold, ReasonBacklog}, nil},
	} {
		d, st := tc.r.Decide(now, tc.s, tc.st)
		if d != tc.want {
			t.Errorf("%s: got %v/%v, want %v/%v", tc.name, d.Action, d.Reason, tc.want.Action, tc.want.Reason)
			continue
		}
		if tc.wantSt != nil && !tc.wantSt(st) {
			t.Errorf("%s: unexpected state %+v", tc.name, st)
		}
	}
	if err := func() Rule { r := r; r.StealBand = 1.5; return r }().validate(); err == nil {
		t.Error("a steal band of 1.5: got no error")
	}
	if err := func() Rule { r := r; r.StealBand = -0.1; return r }().validate(); err == nil {
		t.Error("a steal band of -0.1: got no error")
	}
}

// TestRuleStealBurst: a trial connection that adds nothing, measured while
// a burst of steal halves the host's speed over the two intervals its
// base runs alone. Counted, the burst reads as the trial connection
// doubling the throughput, in both pairs; left out, the base is measured
// again once the burst has passed, and the trial shows no gain.
func TestRuleStealBurst(t *testing.T) {
	run := func(band float64) (Decision, []Reason) {
		r := ruleM(1, 4)
		r.StealBand = band
		now := t0
		d, st := r.Decide(now, stolenAt(sig(1, 2, r.WriteWaitHigh, 0.5, 2000), 0.01), State{})
		if d != (Decision{Grow, ReasonLimit}) {
			t.Fatalf("start: got %v/%v, want a limit trial", d.Action, d.Reason)
		}
		var trail []Reason
		for k := 1; d.Reason == ReasonLimit || d.Reason == ReasonSettling || d.Reason == ReasonStolen; k++ {
			steal, each := 0.01, uint64(1000)
			if k == 2 || k == 3 { // the base's two intervals of the first block
				steal, each = 0.35, 500
			}
			now = now.Add(time.Second)
			d, st = r.Decide(now, stolenAt(sig(2, 2, r.WriteWaitHigh, 0.5, each), steal), st)
			trail = append(trail, d.Reason)
			if k > 20 {
				t.Fatalf("no judgement after %d intervals: %v", k, trail)
			}
		}
		return d, trail
	}
	if d, trail := run(0); d != (Decision{Hold, ReasonGain}) {
		t.Errorf("steal counted: got %v/%v (%v), want the burst read as a gain", d.Action, d.Reason, trail)
	}
	d, trail := run(ruleM(1, 4).StealBand)
	if d != (Decision{Shrink, ReasonNoGain}) || !slices.Contains(trail, ReasonStolen) {
		t.Errorf("steal left out: got %v/%v (%v), want no gain after leaving the burst out", d.Action, d.Reason, trail)
	}
}
