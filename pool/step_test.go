// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// queued is the signals of n connections over an interval of an open
// loop's backlog: RPCs wait wait to be written, mean RPCs in flight in
// all (spread over the connections) and peak at the most, rate RPC/s
// completed.
func queued(n int, wait time.Duration, mean float64, peak int64, rate uint64) Signals {
	s := sig(n, int64(mean)/int64(n), wait, 0.9, rate/uint64(n))
	return read(s, mean, peak)
}

// cooling is a state whose next growth waits until t0 plus d, as after a
// connection kept or given back.
func cooling(d time.Duration) State {
	return State{NextGrow: t0.Add(d), LastChange: t0.Add(d - time.Minute)}
}

// TestRuleBacklogStep: at a backlog (a write wait of WriteWaitBusy over
// two intervals in a row, RPCs in flight not steady) the rule grows to
// BacklogStep times its connections, not one; short of any edge it grows
// one as before (ReasonLimit). The first interval falls in a cooldown: a
// limit outside one grows at once (a trial, one connection). In the open-loop ramp here
// (docs/measured/2026-12-01/ramp-q-2.txt) the pool at 2 connections met
// 40k RPC/s with writes waiting 15 ms, a mean of 733 RPCs in flight and
// a peak of 2000, and took 6-7 s to reach 3 where pool:4 did best.
func TestRuleBacklogStep(t *testing.T) {
	r := DefaultRule(1, 8)
	busy := r.WriteWaitBusy
	for _, tc := range []struct {
		name          string
		rule          func(Rule) Rule
		n             int
		before, now   time.Duration // the write waits of the two intervals
		mean          float64
		peak          int64
		want          Reason
		wantTo, wantN int // the size stepped to, and the base
	}{
		{"the ramp's backlog: 2 to 4", nil, 2, 15 * busy, 15 * busy, 733, 2000, ReasonBacklogStep, 4, 2},
		{"at WriteWaitBusy both times", nil, 2, busy, busy, 300, 600, ReasonBacklogStep, 4, 2},
		{"this interval just short of WriteWaitBusy", nil, 2, busy, busy - 1, 300, 600, ReasonLimit, 0, 2},
		{"the interval before just short", nil, 2, busy - 1, busy, 300, 600, ReasonLimit, 0, 2},
		{"steady: the peak at the mean rounded up", nil, 2, busy, busy, 299.5, 300, ReasonLimit, 0, 2},
		{"one past the mean rounded up", nil, 2, busy, busy, 299.5, 301, ReasonBacklogStep, 4, 2},
		{"from one: one more is the step", nil, 1, busy, busy, 300, 600, ReasonLimit, 0, 1},
		{"from 3: to 6", nil, 3, busy, busy, 300, 600, ReasonBacklogStep, 6, 3},
		{"from 5: at most Max", nil, 5, busy, busy, 300, 600, ReasonBacklogStep, 8, 5},
		{"Max one above: one at a time", func(r Rule) Rule { r.Max = 3; return r }, 2, busy, busy, 300, 600, ReasonLimit, 0, 2},
		{"BacklogStep 1: one at a time", func(r Rule) Rule { r.BacklogStep = 1; return r }, 2, busy, busy, 300, 600, ReasonLimit, 0, 2},
		{"BacklogStep 0: one at a time", func(r Rule) Rule { r.BacklogStep = 0; return r }, 2, busy, busy, 300, 600, ReasonLimit, 0, 2},
		{"BacklogStep 1.5 from 2: 3, one", func(r Rule) Rule { r.BacklogStep = 1.5; return r }, 2, busy, busy, 300, 600, ReasonLimit, 0, 2},
		{"BacklogStep 1.5 from 4: 6", func(r Rule) Rule { r.BacklogStep = 1.5; return r }, 4, busy, busy, 300, 600, ReasonBacklogStep, 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := r
			if tc.rule != nil {
				r = tc.rule(r)
			}
			d, st := r.Decide(t0, queued(tc.n, tc.before, tc.mean, tc.peak, 40000), cooling(time.Second))
			if d != (Decision{Hold, ReasonCooldown}) {
				t.Fatalf("first interval: got %v/%v, want hold/%v", d.Action, d.Reason, ReasonCooldown)
			}
			d, st = r.Decide(t0.Add(time.Second), queued(tc.n, tc.now, tc.mean, tc.peak, 40000), st)
			if d != (Decision{Grow, tc.want}) || st.JumpTo != tc.wantTo || st.BaseConns != tc.wantN {
				t.Fatalf("got %v/%v to %d from a base of %d, want grow/%v to %d from %d", d.Action, d.Reason, st.JumpTo, st.BaseConns, tc.want, tc.wantTo, tc.wantN)
			}
			if st.Step != (tc.want == ReasonBacklogStep) || st.Trial == st.Step {
				t.Errorf("step %v trial %v, want a step (not yet a trial) only for %v", st.Step, st.Trial, ReasonBacklogStep)
			}
		})
	}
}

// stepRun drives the default rule from 2 connections through a backlog
// that lasts ticks intervals: k connections taking RPCs complete tp[k]
// RPC/s with writes waiting wait[k] (WriteWaitBusy and more is a queue).
func stepRun(t *testing.T, tp map[int]uint64, wait map[int]time.Duration, ticks int) *sim {
	t.Helper()
	return stepRunRule(t, DefaultRule(1, 8), tp, wait, ticks)
}

// stepRunRule is stepRun under r; CPUBusy reads 0.9 throughout.
func stepRunRule(t *testing.T, r Rule, tp map[int]uint64, wait map[int]time.Duration, ticks int) *sim {
	t.Helper()
	m := &sim{r: r, now: t0, size: 2, st: cooling(2 * time.Second)}
	for i := 0; i < ticks; i++ {
		k := m.taking()
		s := queued(m.size, wait[k], 700, 2000, tp[k])
		m.tick(t, s)
	}
	return m
}

// TestRuleBacklogStepTrial: a backlog step grows one connection an
// interval to its size and judges them together, a limit's trial (not a
// probe's), against the size before: kept on a gain, and given back
// whole when they gained nothing and RPCs still queue.
func TestRuleBacklogStepTrial(t *testing.T) {
	busy := DefaultRule(1, 8).WriteWaitBusy
	queue := map[int]time.Duration{2: 10 * busy, 3: 10 * busy, 4: 10 * busy}
	// Two intervals of queue, two grows, the trial (1 + 12), room.
	const ticks = 2 + 1 + 12 + 2
	steps := []Reason{ReasonBacklogStep, ReasonBacklogStep, ReasonSettling}
	t.Run("four carry more: kept", func(t *testing.T) {
		m := stepRun(t, map[int]uint64{2: 40000, 3: 40000, 4: 48000}, queue, ticks)
		want := append([]Reason{ReasonCooldown}, steps...)
		want = append(want, ReasonGain)
		if m.size != 4 || len(m.trail) < len(want) || !slices.Equal(m.trail[:len(want)], want) {
			t.Fatalf("got size %d after %v, want 4 after %v", m.size, m.trail, want)
		}
		if m.st.Baseline != 40000 || m.st.Tried != 48000 {
			t.Errorf("judged %.0f against %.0f RPC/s, want 4 connections' 48000 against 2's 40000", m.st.Tried, m.st.Baseline)
		}
	})
	t.Run("four carry the same and RPCs still queue: all back", func(t *testing.T) {
		m := stepRun(t, map[int]uint64{2: 40000, 3: 40000, 4: 40000}, queue, ticks)
		want := append([]Reason{ReasonCooldown}, steps...)
		want = append(want, ReasonNoGain, ReasonClimbGivenBack)
		if m.size != 2 || len(m.trail) < len(want) || !slices.Equal(m.trail[:len(want)], want) {
			t.Fatalf("got size %d after %v, want 2 after %v", m.size, m.trail, want)
		}
		if m.st.Backoff != DefaultRule(1, 8).Cooldown || m.st.Step || m.st.Plateau != 0 {
			t.Errorf("back-off %v, step %v, plateau %d after a step given back: want %v, false, 0", m.st.Backoff, m.st.Step, m.st.Plateau, DefaultRule(1, 8).Cooldown)
		}
	})
	t.Run("the queue gone on four, the same throughput: kept", func(t *testing.T) {
		clear := map[int]time.Duration{2: 10 * busy, 3: 0, 4: 0}
		m := stepRun(t, map[int]uint64{2: 40000, 3: 40000, 4: 40000}, clear, ticks)
		if m.size != 4 || !slices.Contains(m.trail, ReasonLimitGone) {
			t.Fatalf("got size %d after %v, want 4, kept as %v", m.size, m.trail, ReasonLimitGone)
		}
	})
	t.Run("the queue gone on four, the same throughput, the CPU busy: all back", func(t *testing.T) {
		r := DefaultRule(1, 8)
		r.CPUBusyMax = 0.9
		clear := map[int]time.Duration{2: 10 * busy, 3: 0, 4: 0}
		m := stepRunRule(t, r, map[int]uint64{2: 40000, 3: 40000, 4: 40000}, clear, ticks)
		if m.size != 2 || !slices.Contains(m.trail, ReasonCPUBusy) || !slices.Contains(m.trail, ReasonClimbGivenBack) {
			t.Fatalf("got size %d after %v, want 2, given back as %v", m.size, m.trail, ReasonCPUBusy)
		}
	})
	t.Run("a probe's trial would have needed a gain", func(t *testing.T) {
		m := stepRun(t, map[int]uint64{2: 40000, 3: 40000, 4: 40000}, queue, 2+2)
		if !m.st.Trial || m.st.Probe || m.st.Jump || m.st.BaseConns != 2 || m.st.Plateau != 1 {
			t.Errorf("trial %v probe %v jump %v base %d plateau %d after the step, want a limit's trial of 4 against 2, one on trust", m.st.Trial, m.st.Probe, m.st.Jump, m.st.BaseConns, m.st.Plateau)
		}
	})
}

// TestRuleBacklogStepClosedLoop: a closed loop's callers hold their count,
// so its waits, however long, grow one connection at a time: in the
// closed loop here single intervals of 1-4 ms came tens of seconds apart.
func TestRuleBacklogStepClosedLoop(t *testing.T) {
	r := DefaultRule(1, 8)
	st := cooling(time.Second)
	var d Decision
	for i := 0; i < 2; i++ {
		d, st = r.Decide(t0.Add(time.Duration(i)*time.Second), queued(2, 4*r.WriteWaitBusy, 64, 64, 40000), st)
	}
	if d != (Decision{Grow, ReasonLimit}) || st.Step || st.JumpTo != 0 {
		t.Errorf("got %v/%v (step %v, to %d) at 64 callers, want grow/%v, one", d.Action, d.Reason, st.Step, st.JumpTo, ReasonLimit)
	}
}

func TestRuleBacklogStepInvalid(t *testing.T) {
	for _, v := range []float64{-1, math.NaN()} {
		r := DefaultRule(1, 8)
		r.BacklogStep = v
		if err := r.validate(); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("BacklogStep %v: got %v, want ErrInvalidOption", v, err)
		}
	}
}

// TestRuleHeldCostlyOff: with HeldCostly off (rule q), a limit trial that
// held the throughput with its limit gone is kept whatever its CPU per
// RPC; on, the same trial is given back (ReasonHeldCostly).
func TestRuleHeldCostlyOff(t *testing.T) {
	r := DefaultRule(1, 8)
	s := used(sig(3, 2, r.WriteWaitHigh-1, 0.5, 317), 951*11*time.Microsecond)
	for _, tc := range []struct {
		on   bool
		want Decision
	}{{true, Decision{Shrink, ReasonHeldCostly}}, {false, Decision{Hold, ReasonLimitGone}}} {
		r.HeldCostly = tc.on
		st := cpuOf(judging())
		st.Phase = int(r.TrialTime()/r.Interval) - 1
		if d, _ := r.Decide(t0.Add(r.Settle), s, st); d != tc.want {
			t.Errorf("HeldCostly %v: got %v/%v, want %v/%v", tc.on, d.Action, d.Reason, tc.want.Action, tc.want.Reason)
		}
	}
}
