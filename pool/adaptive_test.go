// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0) // the fake clock's origin

// sig is the signals of n ready connections over 1s, each with inflight
// RPCs in flight, the given write wait and completed RPCs.
func sig(n int, inflight int64, wait time.Duration, cpu float64, completed uint64) Signals {
	s := Signals{Interval: time.Second, CPUBusy: cpu}
	for i := 0; i < n; i++ {
		s.Conns = append(s.Conns, ConnSignals{Ready: true, InFlight: inflight, WriteWait: wait, Completed: completed})
	}
	return s
}

// took sets every connection's Spent to its Completed RPCs times d: each
// RPC of the interval was in flight for d.
func took(s Signals, d time.Duration) Signals {
	for i := range s.Conns {
		s.Conns[i].Spent = time.Duration(s.Conns[i].Completed) * d
	}
	return s
}

// read is s with the sampler's reads over the interval: a mean and a peak
// of the RPCs in flight.
func read(s Signals, mean float64, peak int64) Signals {
	s.Reads, s.MeanInFlight, s.PeakInFlight = GuardChecks, mean, peak
	return s
}

// pairedAt is a trial at its judgement, like judging, with its first
// pair measured: tr RPCs with every connection against b0 with the base
// (then b1 with the base for the second pair), each RPC in flight wt, wb0
// and wb1; the judged interval is the second pair's other side.
func pairedAt(tr, b0, b1 float64, wt, wb0, wb1 time.Duration) State {
	st := State{Trial: true, TrialStart: t0, BaseConns: 2, Phase: 3}
	side := func(n float64, w time.Duration) Side {
		return Side{RPCs: n, Time: time.Second, Spent: time.Duration(n) * w}
	}
	st.Pairs[0] = [2]Side{side(tr, wt), side(b0, wb0)}
	st.Pairs[1][1] = side(b1, wb1)
	st.TrialRPCs, st.TrialTime, st.TrialSpent = tr, time.Second, st.Pairs[0][0].Spent
	st.BaseRPCs, st.BaseTime, st.BaseSpent = b0+b1, 2*time.Second, st.Pairs[0][1].Spent+st.Pairs[1][1].Spent
	return st
}

func asProbe(st State) State { st.Probe = true; return st }

// unparked is s with the park guard's note that it unparked.
func unparked(s Signals) Signals { s.Unparked = true; return s }

// timed is st with its base RPCs each in flight for 1ms.
func timed(st State) State {
	st.BaseSpent = time.Duration(st.BaseRPCs) * time.Millisecond
	return st
}

// used is s with the process's CPU time over the interval.
func used(s Signals, cpu time.Duration) Signals { s.CPU = cpu; return s }

// cpuOf is st with its base RPCs at 10µs of the process's CPU each.
func cpuOf(st State) State {
	st.BaseCPU = time.Duration(st.BaseRPCs) * 10 * time.Microsecond
	return st
}

// oneOf and twoOf put one and two RPCs in flight on s's first connection.
func oneOf(s Signals) Signals { s.Conns[0].InFlight = 1; return s }
func twoOf(s Signals) Signals { s.Conns[0].InFlight = 2; return s }

// oneEach is n ready connections, the first k with one RPC in flight.
func oneEach(n, k int) Signals {
	s := sig(n, 0, 0, 0.5, 0)
	for i := 0; i < k; i++ {
		s.Conns[i].InFlight = 1
	}
	return s
}

// judging is a trial at its last interval: three of its four measured,
// the two with its base of 2 connections at 1000 RPC/s, the first with
// every connection at none, so that it is judged on the last interval's
// throughput against 1000 RPC/s.
func judging() State {
	return State{Trial: true, TrialStart: t0, BaseConns: 2, Phase: 3, BaseRPCs: 2000, BaseTime: 2 * time.Second}
}

// TestRuleProbeCPU: a probe, and a climb, need CPU to spare. With more
// than one RPC in flight per connection and none waiting WriteWaitHigh to
// be written, rule m (ruleM) probes with CPUBusy just below CPUBusyMax or
// unknown, and holds at CPUBusyMax (ReasonBusyNoProbe); a write wait at
// WriteWaitHigh grows with CPU to spare, and with the CPU busy only at
// WriteWaitBusy (below it: ReasonBusyWait); with Probe off it holds as
// balanced. Side by side in one process (scripts/slices -sizes) this
// repository's 1-CPU client, about 1 CPU busy under load, did best on one
// connection at 1 to 32 RPCs in flight, at the least CPU per RPC.
func TestRuleProbeCPU(t *testing.T) {
	r := ruleM(1, 4)
	if !r.Probe {
		t.Fatal("rule m does not probe")
	}
	high, busy, busyWait := r.WriteWaitHigh, r.CPUBusyMax, r.WriteWaitBusy
	if busyWait <= high {
		t.Fatalf("rule m's WriteWaitBusy %v is not above WriteWaitHigh %v", busyWait, high)
	}
	off := r
	off.Probe = false
	same := r // WriteWaitBusy at WriteWaitHigh: WriteWaitHigh holds
	same.WriteWaitBusy = high
	lower := r // WriteWaitBusy below WriteWaitHigh: WriteWaitHigh holds
	lower.WriteWaitBusy = high / 2
	for _, tc := range []struct {
		name string
		r    Rule
		s    Signals
		st   State
		want Decision
	}{
		{"crowded, CPU just below busy: probes", r, sig(1, 4, high-1, busy-0.01, 100), State{}, Decision{Grow, ReasonProbe}},
		{"crowded, CPU unknown: probes", r, sig(1, 4, high-1, -1, 100), State{}, Decision{Grow, ReasonProbe}},
		{"crowded, CPU at busy: no probe", r, sig(1, 4, high-1, busy, 100), State{}, Decision{Hold, ReasonBusyNoProbe}},
		{"crowded, CPU just below busy, a write wait at high: grows", r, sig(1, 4, high, busy-0.01, 100), State{}, Decision{Grow, ReasonLimit}},
		{"crowded, CPU unknown, a write wait at high: grows", r, sig(1, 4, high, -1, 100), State{}, Decision{Grow, ReasonLimit}},
		{"crowded, CPU at busy, a write wait at high: holds", r, sig(1, 4, high, busy, 100), State{}, Decision{Hold, ReasonBusyWait}},
		{"crowded, CPU at busy, a write wait just below busy's: holds", r, sig(1, 4, busyWait-1, busy, 100), State{}, Decision{Hold, ReasonBusyWait}},
		{"crowded, CPU at busy, a write wait just below busy's after one at it: holds", r, sig(1, 4, busyWait-1, busy, 100), State{BusyWaited: true}, Decision{Hold, ReasonBusyWait}},
		{"crowded, CPU at busy, a write wait at busy's for one interval: holds", r, sig(1, 4, busyWait, busy, 100), State{}, Decision{Hold, ReasonBusyWait}},
		{"crowded, CPU at busy, a write wait at busy's after one: grows", r, sig(1, 4, busyWait, busy, 100), State{BusyWaited: true}, Decision{Grow, ReasonLimit}},
		{"WriteWaitBusy at high, CPU at busy, a write wait at high: grows", same, sig(1, 4, high, busy, 100), State{}, Decision{Grow, ReasonLimit}},
		{"WriteWaitBusy below high, CPU at busy, a write wait just below high: no probe", lower, sig(1, 4, high-1, busy, 100), State{}, Decision{Hold, ReasonBusyNoProbe}},
		{"one per conn, CPU at busy, a write wait at high: balanced", r, sig(1, 1, high, busy, 100), State{}, Decision{Hold, ReasonBalanced}},
		{"Probe off, crowded, CPU free: balanced", off, sig(1, 4, high-1, 0.5, 100), State{}, Decision{Hold, ReasonBalanced}},
		{"paying, CPU just below busy: a climb", r, sig(2, 1, 0, busy-0.01, 100), State{Paying: true}, Decision{Grow, ReasonProbe}},
		{"paying, CPU at busy: no climb", r, sig(2, 1, 0, busy, 100), State{Paying: true}, Decision{Hold, ReasonBalanced}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := tc.r.Decide(t0, tc.s, tc.st); got != tc.want {
				t.Errorf("got %v/%v, want %v/%v", got.Action, got.Reason, tc.want.Action, tc.want.Reason)
			}
		})
	}
}

// TestRuleBusyWaitTwice: with the CPU busy, a connection is a limit only
// when its write wait reached WriteWaitBusy, with more than one RPC in
// flight per connection, in two intervals in a row outside a trial: a
// backlog lasts, while in the closed loop here single intervals of 1-4 ms
// came tens of seconds apart and each started a trial.
func TestRuleBusyWaitTwice(t *testing.T) {
	r := ruleM(1, 4)
	busy, long := r.CPUBusyMax, r.WriteWaitBusy
	waits := sig(1, 4, long, busy, 100)
	for _, tc := range []struct {
		name   string
		before []Signals // decided in turn, from State{}
		want   Decision
	}{
		{"once: holds", nil, Decision{Hold, ReasonBusyWait}},
		{"twice in a row: grows", []Signals{waits}, Decision{Grow, ReasonLimit}},
		{"twice, the first just short: holds", []Signals{sig(1, 4, long-1, busy, 100)}, Decision{Hold, ReasonBusyWait}},
		{"twice, the first not crowded: holds", []Signals{sig(1, 1, long, busy, 100)}, Decision{Hold, ReasonBusyWait}},
		{"twice with a short wait between: holds", []Signals{waits, sig(1, 4, long-1, busy, 100)}, Decision{Hold, ReasonBusyWait}},
		{"twice with an interval not ready between: holds", []Signals{waits, notReady(sig(1, 4, long, busy, 100))}, Decision{Hold, ReasonBusyWait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st State
			for _, s := range tc.before {
				_, st = r.Decide(t0, s, st)
			}
			if got, _ := r.Decide(t0, waits, st); got != tc.want {
				t.Errorf("got %v/%v, want %v/%v", got.Action, got.Reason, tc.want.Action, tc.want.Reason)
			}
		})
	}
}

// probeAt is a probe's trial at its judgement (judging) with plateau
// connections kept on trust before it.
func probeAt(plateau int) State {
	st := judging()
	st.Probe, st.Plateau = true, plateau
	return st
}

// recheckAt is the newest connection tried again at a fallen load
// (ReasonLoadFell), at its judgement (judging), kept at 3000 RPC/s.
func recheckAt() State {
	st := judging()
	st.Recheck, st.Probe, st.Jump, st.KeptRate = true, true, true, 3000
	return st
}

func notReady(s Signals) Signals {
	s.Conns[len(s.Conns)-1].Ready = false
	return s
}

// Each threshold of Rule.Decide, on both sides of its edge.
func TestRuleDecide(t *testing.T) {
	r := ruleM(2, 4) // 100µs, 1 per conn, CPU 0.8, settle 4s, gain 5%, cooldown 5s, idle 30s
	high := r.WriteWaitHigh
	trial := judging()
	fresh := State{Trial: true, TrialStart: t0, BaseConns: 2}
	tests := []struct {
		name   string
		now    time.Time
		s      Signals
		st     State
		want   Decision
		wantSt func(State) bool // nil: not checked
	}{
		// A connection is the limit: write wait at WriteWaitHigh and more
		// than one RPC in flight per connection, whatever the CPU.
		{"limit: grows", t0, sig(2, 2, high, 0.5, 100), State{}, Decision{Grow, ReasonLimit},
			// Judged against the 2 connections it had, every one taking
			// RPCs for the trial's first interval.
			func(s State) bool {
				return s.Trial && s.TrialStart.Equal(t0) && s.BaseConns == 2 && s.Phase == 0 && s.Active == 0 && s.StartInFlight == 4
			}},
		{"write wait just below high: a probe", t0, sig(2, 2, high-1, 0.5, 100), State{}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.Trial && s.Probe }},
		{"a probe that fell below -MinGain is given back", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 316), probeAt(0), Decision{Shrink, ReasonNoGain},
			func(s State) bool {
				return !s.Trial && !s.Probe && s.Backoff == r.Cooldown && s.Plateau == 0 && s.GiveBack == 0
			}},
		{"a probe that gained is kept", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 350), probeAt(0), Decision{Hold, ReasonGain},
			func(s State) bool {
				return !s.Trial && !s.Probe && s.Judged && s.Baseline == 1000 && s.Tried == 1050 && s.Active == 0 && s.Phase == 0
			}},
		{"one in flight per conn is not a limit", t0, sig(2, 1, high, 0.5, 100), State{}, Decision{Hold, ReasonBalanced}, nil},
		{"CPU at max still trials, at WriteWaitBusy twice in a row", t0, sig(2, 2, r.WriteWaitBusy, 0.8, 100), State{BusyWaited: true}, Decision{Grow, ReasonLimit}, nil},
		{"CPU unknown counts as free", t0, sig(2, 2, high, -1, 100), State{}, Decision{Grow, ReasonLimit}, nil},
		{"one below max", t0, sig(3, 2, high, 0.5, 100), State{}, Decision{Grow, ReasonLimit}, nil},
		{"at max", t0, sig(4, 2, high, 0.5, 100), State{}, Decision{Hold, ReasonAtMax}, nil},
		{"back-off not passed", t0.Add(-1), sig(2, 2, high, 0.5, 100), State{NextGrow: t0}, Decision{Hold, ReasonCooldown}, nil},
		{"back-off passed", t0, sig(2, 2, high, 0.5, 100), State{NextGrow: t0}, Decision{Grow, ReasonLimit}, nil},
		{"not ready holds", t0, notReady(sig(2, 2, high, 0.5, 100)), State{}, Decision{Hold, ReasonNotReady}, nil},
		{"not ready restarts a trial's measurement", t0.Add(time.Minute), notReady(sig(3, 2, high, 0.5, 0)), trial, Decision{Hold, ReasonNotReady},
			func(s State) bool {
				return s.Trial && s.TrialStart.Equal(t0.Add(time.Minute)) && s.Phase == 0 && s.Active == 0 && s.BaseRPCs == 0 && s.BaseTime == 0 && s.BaseConns == 2
			}},

		// A trial: measured B A A B (every connection, its base, its base,
		// every connection), then judged on the two sides.
		{"first interval: with every connection, then the base", t0.Add(time.Second), sig(3, 2, high, 0.5, 300), fresh, Decision{Hold, ReasonSettling},
			func(s State) bool {
				return s.Phase == 1 && s.Active == 2 && s.TrialRPCs == 900 && s.TrialTime == time.Second && s.BaseRPCs == 0 && !s.Judged
			}},
		{"second interval: the base, then the base", t0.Add(2 * time.Second), sig(3, 2, high, 0.5, 300), func() State { s := fresh; s.Phase = 1; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.Phase == 2 && s.Active == 2 && s.BaseRPCs == 900 && s.TrialRPCs == 0 }},
		{"third interval: the base, then every connection", t0.Add(3 * time.Second), sig(3, 2, high, 0.5, 300), func() State { s := fresh; s.Phase = 2; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool {
				return s.Phase == 3 && s.Active == 0 && s.BaseRPCs == 900 && s.BaseTime == time.Second
			}},
		{"gain at MinGain", t0.Add(r.Settle), sig(3, 2, high, 0.5, 350), trial, Decision{Hold, ReasonGain},
			func(s State) bool {
				return !s.Trial && s.Backoff == 0 && s.NextGrow.Equal(t0.Add(r.Settle+r.Cooldown))
			}},
		// A park that built a backlog: the base cannot carry the load.
		{"parked and unparked by the guard: kept", t0.Add(2 * time.Second), unparked(sig(1, 29, high, 0.5, 300)), func() State { s := fresh; s.Phase, s.StartInFlight = 1, 10; return s }(), Decision{Hold, ReasonBacklog},
			func(s State) bool {
				return !s.Trial && s.Active == 0 && s.Phase == 0 && s.Kept == 10 && s.Backoff == 0 && s.NextGrow.Equal(t0.Add(2*time.Second+r.Cooldown))
			}},
		{"parked, past the limit at the interval's end but not unparked: a swing, measuring", t0.Add(2 * time.Second), sig(1, 29, high, 0.5, 300), func() State { s := fresh; s.Phase, s.StartInFlight = 1, 10; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.BaseRPCs == 300 && s.Phase == 2 }},
		{"parked, unparked early by the guard though in flight fell back: kept", t0.Add(2 * time.Second), unparked(sig(1, 12, high, 0.5, 300)), func() State { s := fresh; s.Phase, s.StartInFlight = 1, 10; return s }(), Decision{Hold, ReasonBacklog}, nil},
		{"the backlog of an interval with every connection is not the park's", t0.Add(time.Second), sig(1, 29, high, 0.5, 300), func() State { s := fresh; s.StartInFlight = 10; return s }(), Decision{Hold, ReasonSettling}, nil},
		{"a plateau step kept on a backlog keeps the climb", t0.Add(2 * time.Second), unparked(sig(1, 29, high, 0.5, 300)), func() State { s := fresh; s.Phase, s.StartInFlight, s.Plateau, s.Probe = 2, 10, 2, true; return s }(), Decision{Hold, ReasonBacklog},
			func(s State) bool { return s.Plateau == 0 && s.GiveBack == 0 && !s.Trial }},
		{"judged on the trial's mean, not its last second", t0.Add(r.Settle), sig(3, 2, high, 0.5, 300), func() State { s := trial; s.TrialRPCs, s.TrialTime = 1300, time.Second; return s }(), Decision{Hold, ReasonGain},
			// (1300 + 900) / 2 s = 1100 RPC/s: a 10% gain though the last second fell to 900.
			func(s State) bool { return !s.Trial && s.TrialRPCs == 0 && s.TrialTime == 0 && s.Tried == 1100 }},
		{"gain just below MinGain, limit still there", t0.Add(r.Settle), sig(3, 2, high, 0.5, 349), trial, Decision{Shrink, ReasonNoGain},
			func(s State) bool {
				return !s.Trial && s.Backoff == r.Cooldown && s.NextGrow.Equal(t0.Add(r.Settle+r.Cooldown))
			}},
		{"held at -MinGain, limit gone", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), trial, Decision{Hold, ReasonLimitGone}, nil},
		{"held, limit gone, CPU just below max", t0.Add(r.Settle), sig(3, 2, high-1, 0.79, 317), trial, Decision{Hold, ReasonLimitGone}, nil},
		// Held at 951 against 1000 RPC/s, the base's RPCs at 10µs of CPU
		// each (cpuOf): the CPU per RPC may rise to 10µs x 0.951 x 1.05 =
		// 9985.5ns before the keep costs MinGain more than it carried.
		{"held, limit gone, CPU per RPC just under MinGain past the throughput: kept", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 317), 951*9985*time.Nanosecond), cpuOf(trial), Decision{Hold, ReasonLimitGone}, nil},
		{"held, limit gone, CPU per RPC MinGain past the throughput: given back", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 317), 951*9986*time.Nanosecond), cpuOf(trial), Decision{Shrink, ReasonHeldCostly},
			func(s State) bool { return !s.Trial && s.Backoff == r.Cooldown && s.Failed == 1 && s.GiveBack == 0 }},
		{"... with a backlog step's connections on trust: all back", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 317), 951*11*time.Microsecond), func() State { s := cpuOf(trial); s.Plateau = 2; return s }(), Decision{Shrink, ReasonHeldCostly},
			func(s State) bool { return s.GiveBack == 2 && s.Plateau == 0 }},
		// The base's RPCs each in flight 1ms (timed): 1000 RPC/s x 1ms is
		// one RPC in flight; with every connection 951 RPC/s x 998µs is
		// 0.949, down by MinGain (drained), x 999µs 0.950049.
		{"held, limit gone, CPU per RPC up, RPCs in flight down by MinGain (a queue drained): kept", t0.Add(r.Settle), took(used(sig(3, 2, high-1, 0.5, 317), 951*11*time.Microsecond), 998*time.Microsecond), timed(cpuOf(trial)), Decision{Hold, ReasonLimitGone}, nil},
		{"... down by just under MinGain: given back", t0.Add(r.Settle), took(used(sig(3, 2, high-1, 0.5, 317), 951*11*time.Microsecond), 999*time.Microsecond), timed(cpuOf(trial)), Decision{Shrink, ReasonHeldCostly}, nil},
		{"held, limit gone, CPU unknown: kept", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 317), -1), cpuOf(trial), Decision{Hold, ReasonLimitGone}, nil},
		{"held, limit gone, CPU at max gives it back", t0.Add(r.Settle), sig(3, 2, high-1, 0.8, 317), trial, Decision{Shrink, ReasonCPUBusy},
			func(s State) bool { return !s.Trial && s.Backoff == r.Cooldown }},
		{"gain at MinGain, CPU at max", t0.Add(r.Settle), sig(3, 2, high, 0.8, 350), trial, Decision{Hold, ReasonGain}, nil},
		{"fell below -MinGain, limit gone", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 316), trial, Decision{Shrink, ReasonNoGain}, nil},
		{"no RPCs on either side is no gain", t0.Add(r.Settle), sig(3, 2, high, 0.5, 0), func() State { s := trial; s.BaseRPCs = 0; return s }(), Decision{Shrink, ReasonNoGain}, nil},
		{"a failed trial doubles the back-off", t0.Add(r.Settle), sig(3, 2, high, 0.5, 0), func() State { s := trial; s.Backoff = 10 * time.Second; return s }(), Decision{Shrink, ReasonNoGain},
			func(s State) bool {
				return s.Backoff == 20*time.Second && s.NextGrow.Equal(t0.Add(r.Settle+20*time.Second))
			}},
		{"the back-off stops at MaxBackoff", t0.Add(r.Settle), sig(3, 2, high, 0.5, 0), func() State { s := trial; s.Backoff = 4 * time.Minute; return s }(), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.Backoff == r.MaxBackoff }},

		// Idle: no limit and under one RPC in flight per connection.
		{"idle starts the idle clock", t0, sig(3, 0, 0, 0.5, 0), State{}, Decision{Hold, ReasonIdleWait},
			func(s State) bool { return s.IdleSince.Equal(t0) }},
		{"idle just short of IdleFor", t0.Add(r.IdleFor - 1), sig(3, 0, 0, 0.5, 0), State{IdleSince: t0}, Decision{Hold, ReasonIdleWait}, nil},
		{"idle for IdleFor shrinks; with no RPC at all the next waits a cooldown", t0.Add(r.IdleFor), sig(3, 0, 0, 0.5, 0), State{IdleSince: t0}, Decision{Shrink, ReasonIdle},
			func(s State) bool {
				return s.IdleSince.Equal(t0) && s.LastChange.Equal(t0.Add(r.IdleFor))
			}},
		{"idle for IdleFor with an RPC in flight: the next shrink waits IdleFor again", t0.Add(r.IdleFor), oneEach(3, 1), State{IdleSince: t0}, Decision{Shrink, ReasonIdle},
			func(s State) bool { return s.IdleSince.Equal(t0.Add(r.IdleFor)) }},
		{"idle for IdleFor with RPCs completed: the next shrink waits IdleFor again", t0.Add(r.IdleFor), sig(3, 0, 0, 0.5, 1), State{IdleSince: t0}, Decision{Shrink, ReasonIdle},
			func(s State) bool { return s.IdleSince.Equal(t0.Add(r.IdleFor)) }},
		{"idle but changed within the cooldown", t0.Add(r.IdleFor), sig(3, 0, 0, 0.5, 0), State{IdleSince: t0, LastChange: t0.Add(r.IdleFor - r.Cooldown + 1)}, Decision{Hold, ReasonIdleWait}, nil},
		{"idle and the cooldown passed", t0.Add(r.IdleFor), sig(3, 0, 0, 0.5, 0), State{IdleSince: t0, LastChange: t0.Add(r.IdleFor - r.Cooldown)}, Decision{Shrink, ReasonIdle}, nil},
		{"idle at min", t0.Add(time.Hour), sig(2, 0, 0, 0.5, 0), State{IdleSince: t0}, Decision{Hold, ReasonAtMin}, nil},
		{"one in flight per conn is not idle", t0.Add(r.IdleFor), sig(3, 1, 0, 0.5, 0), State{IdleSince: t0}, Decision{Hold, ReasonBalanced},
			func(s State) bool { return s.IdleSince.IsZero() }},
		{"write wait at high is not idle", t0.Add(r.IdleFor), sig(3, 0, high, 0.5, 0), State{IdleSince: t0}, Decision{Hold, ReasonBalanced}, nil},

		// A climb: while the last trial paid, probe one more connection even
		// with one RPC or fewer in flight per connection.
		{"a gain leaves the pool paying, kept at its in-flight", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 350), probeAt(0), Decision{Hold, ReasonGain},
			func(s State) bool { return s.Paying && s.Kept == 6 }},
		{"a probe given back ends the climb", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 316), func() State { s := probeAt(0); s.Paying = true; return s }(), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return !s.Paying }},
		{"paying: climbs at one RPC per conn", t0, sig(3, 1, 0, 0.5, 100), State{Paying: true}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.Trial && s.Probe }},
		{"paying: climbs with two RPCs in flight in all", t0, twoOf(sig(3, 0, 0, 0.5, 100)), State{Paying: true, Kept: 2}, Decision{Grow, ReasonProbe}, nil},
		{"paying: one RPC in flight in all has nothing to spread", t0, oneOf(sig(3, 0, 0, 0.5, 100)), State{Paying: true, Kept: 1}, Decision{Hold, ReasonBalanced}, nil},
		{"paying, within the cooldown", t0.Add(-1), sig(3, 1, 0, 0.5, 100), State{Paying: true, NextGrow: t0}, Decision{Hold, ReasonCooldown}, nil},
		{"paying at max holds", t0, sig(4, 1, 0, 0.5, 100), State{Paying: true}, Decision{Hold, ReasonAtMax}, nil},
		{"probing off: no climb", t0, sig(3, 1, 0, 0.5, 100), State{Paying: true}, Decision{Hold, ReasonBalanced}, nil},
		// Idle after a climb: only once in flight falls below 3/4 of Kept.
		{"in flight at 3/4 of kept is not idle", t0.Add(r.IdleFor), oneEach(4, 3), State{IdleSince: t0, Kept: 4}, Decision{Hold, ReasonBalanced}, nil},
		{"in flight below 3/4 of kept is idle", t0.Add(r.IdleFor), oneEach(4, 2), State{IdleSince: t0, Kept: 4}, Decision{Shrink, ReasonIdle},
			func(s State) bool { return !s.Paying }},

		// A plateau: a probe that held at -MinGain is kept on trust and
		// the next probed at once, all judged against the first baseline.
		{"a probe that held at -MinGain is kept on trust", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), probeAt(0), Decision{Grow, ReasonPlateau},
			// A new trial, judged against the same base of 2 connections.
			func(s State) bool {
				return s.Trial && s.Probe && s.TrialStart.Equal(t0.Add(r.Settle)) && s.BaseConns == 2 && s.Plateau == 1 &&
					s.Phase == 0 && s.Active == 0 && s.TrialRPCs == 0 && s.BaseRPCs == 0 && s.Judged
			}},
		{"on trust at PlateauSteps-1: one more", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), probeAt(r.PlateauSteps - 1), Decision{Grow, ReasonPlateau},
			func(s State) bool { return s.Plateau == r.PlateauSteps && s.BaseConns == 2 }},
		{"the top held without gain: the climb goes back", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), probeAt(r.PlateauSteps), Decision{Shrink, ReasonClimbGivenBack},
			func(s State) bool {
				return !s.Trial && s.GiveBack == r.PlateauSteps && s.Plateau == 0 && s.Backoff == r.Cooldown
			}},
		{"the top gained: the climb is kept", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 350), probeAt(r.PlateauSteps), Decision{Hold, ReasonGain},
			func(s State) bool { return !s.Trial && s.GiveBack == 0 && s.Plateau == 0 && s.Paying && s.Kept == 6 }},
		{"on trust, the next fell: the climb goes back", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 316), probeAt(1), Decision{Shrink, ReasonClimbGivenBack},
			func(s State) bool { return s.GiveBack == 1 }},
		{"held at max: nothing to walk to", t0.Add(r.Settle), sig(4, 2, high-1, 0.5, 238), probeAt(0), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.GiveBack == 0 }},
		{"held with one RPC in flight: nothing to spread", t0.Add(r.Settle), oneOf(sig(3, 0, 0, 0.5, 317)), probeAt(0), Decision{Shrink, ReasonNoGain}, nil},
		{"held with two RPCs in flight: a plateau", t0.Add(r.Settle), twoOf(sig(3, 0, 0, 0.5, 317)), probeAt(0), Decision{Grow, ReasonPlateau}, nil},
		{"a limit trial that held is not a plateau", t0.Add(r.Settle), sig(3, 2, high, 0.5, 317), trial, Decision{Shrink, ReasonNoGain}, nil},
		{"plateau steps 0 judges each alone", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), probeAt(0), Decision{Shrink, ReasonNoGain}, nil},
		// The time in flight, when the throughput held (an open loop's
		// offered rate): the base's RPCs took 1ms each (timed).
		{"held, 5% less time in flight: kept", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 949*time.Microsecond), timed(probeAt(2)), Decision{Hold, ReasonFaster},
			func(s State) bool {
				return !s.Trial && s.Paying && s.Backoff == 0 && s.Plateau == 0 && s.GiveBack == 0 && s.Judged &&
					s.BaseLatency == time.Millisecond && s.TriedLatency == 949*time.Microsecond
			}},
		{"held, just under 5% less: a plateau", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 951*time.Microsecond), timed(probeAt(0)), Decision{Grow, ReasonPlateau}, nil},
		{"held, 5% more time in flight: given back with the climb", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 1051*time.Microsecond), timed(probeAt(2)), Decision{Shrink, ReasonSlower},
			func(s State) bool { return !s.Trial && s.GiveBack == 2 && s.Backoff == r.Cooldown && !s.Paying }},
		{"held, just under 5% more: a plateau", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 1049*time.Microsecond), timed(probeAt(0)), Decision{Grow, ReasonPlateau}, nil},
		{"a limit trial, held, 5% more: given back", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 1051*time.Microsecond), timed(trial), Decision{Shrink, ReasonSlower}, nil},
		{"a limit trial, held, just under 5% more: the limit is gone", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 1049*time.Microsecond), timed(trial), Decision{Hold, ReasonLimitGone}, nil},
		{"a throughput gain is kept though each RPC took longer", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 350), 2*time.Millisecond), timed(trial), Decision{Hold, ReasonGain}, nil},
		{"fell below -MinGain and faster is still no gain", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 316), 500*time.Microsecond), timed(trial), Decision{Shrink, ReasonNoGain}, nil},
		{"no time measured on the base: judged on throughput alone", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 500*time.Microsecond), probeAt(0), Decision{Grow, ReasonPlateau}, nil},
		{"a trial interval adds its RPCs' time", t0.Add(time.Second), took(sig(3, 2, high, 0.5, 300), time.Millisecond), fresh, Decision{Hold, ReasonSettling},
			func(s State) bool { return s.TrialSpent == 900*time.Millisecond && s.BaseSpent == 0 }},
		{"a base interval adds its RPCs' time", t0.Add(2 * time.Second), took(sig(3, 2, high, 0.5, 300), time.Millisecond), func() State { s := fresh; s.Phase = 1; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.BaseSpent == 900*time.Millisecond && s.TrialSpent == 0 }},
		// The sampler's reads over the interval stand for the count at its
		// end: an open loop's count swings from one instant to the next.
		{"one in flight per connection at the end, a mean above: a probe", t0, read(sig(2, 1, 0, 0.5, 100), 2.1, 5), State{}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.StartInFlight == 5 }},
		{"four per connection at the end, a mean of one: not crowded", t0, read(sig(2, 4, 0, 0.5, 100), 2, 9), State{}, Decision{Hold, ReasonBalanced}, nil},
		{"four per connection at the end, a mean under one: idle", t0, read(sig(4, 4, 0, 0.5, 100), 3.9, 16), State{}, Decision{Hold, ReasonIdleWait}, nil},
		{"the mean at 3/4 of kept is not idle", t0.Add(r.IdleFor), read(oneEach(4, 0), 3, 3), State{IdleSince: t0, Kept: 4}, Decision{Hold, ReasonBalanced}, nil},
		{"the mean below 3/4 of kept is idle", t0.Add(r.IdleFor), read(oneEach(4, 4), 2.9, 4), State{IdleSince: t0, Kept: 4}, Decision{Shrink, ReasonIdle}, nil},
		{"kept at the mean, rounded up", t0.Add(r.Settle), read(sig(3, 2, high, 0.5, 350), 4.2, 9), trial, Decision{Hold, ReasonGain},
			func(s State) bool { return s.Kept == 5 }},
		{"an interval with every connection raises the park limit to twice its peak", t0.Add(time.Second), read(sig(3, 2, high, 0.5, 300), 6, 30), func() State { s := fresh; s.StartInFlight = 10; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.AllPeak == 30 && s.parkLimit() == 2*30+BacklogSlack && s.Active == 2 }},
		{"a parked interval leaves the park limit", t0.Add(2 * time.Second), read(sig(3, 2, high, 0.5, 300), 6, 50), func() State { s := fresh; s.Phase, s.StartInFlight, s.AllPeak = 1, 10, 30; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.AllPeak == 30 }},
		{"the start's peak above every connection's: the start sets the limit", t0.Add(time.Second), read(sig(3, 2, high, 0.5, 300), 6, 12), func() State { s := fresh; s.StartInFlight = 20; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.parkLimit() == 2*20+BacklogSlack }},
		// Each pair of the trial must show half the margin itself.
		{"a step up of a fifth in an open loop's rate inside a trial is no gain", t0.Add(r.Settle), sig(3, 2, high, 0.5, 4000), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.Tried > 1.05*s.Baseline }},
		// A load that moved by more than LoadMoved between the two
		// intervals of one size judges nothing.
		{"the load rose by just under LoadMoved: judged", t0.Add(r.Settle), sig(3, 2, high, 0.5, 4166), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Shrink, ReasonNoGain}, nil},
		{"the load rose by more than LoadMoved: kept", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 4168), time.Millisecond), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadRose},
			func(s State) bool {
				return !s.Trial && s.Backoff == 0 && s.Kept == 6 && s.NextGrow == t0.Add(r.Settle+r.Cooldown)
			}},
		// A load that rose is more RPCs in flight too (Little's law): each
		// side's RPCs took 1ms, so 10 were in flight on the mean.
		{"the throughput rose by LoadMoved at the same RPCs in flight (a closed loop): measured again", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 4168), 800*time.Microsecond), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadMoved},
			func(s State) bool { return s.Trial && s.Remeasured && s.Phase == 0 }},
		{"the throughput rose, the RPCs in flight just under LoadMoved: measured again", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 4168), 999*time.Microsecond), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadMoved}, nil},
		{"the throughput rose at the same RPCs in flight in a trial measured again: judged", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 4168), 800*time.Microsecond), func() State {
			s := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
			s.Remeasured = true
			return s
		}(), Decision{Shrink, ReasonNoGain}, func(s State) bool { return !s.Trial && !s.Remeasured }},
		{"the base's load alone rose by more than LoadMoved: kept", t0.Add(r.Settle), sig(3, 2, high, 0.5, 3333), pairedAt(10000, 10000, 12600, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadRose}, nil},
		{"the load fell by more than LoadMoved: measured again", t0.Add(r.Settle), sig(3, 2, high, 0.5, 2666), pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadMoved},
			func(s State) bool {
				return s.Trial && s.Remeasured && s.Phase == 0 && s.Active == 0 && s.Pairs == [2][2]Side{} && s.TrialStart == t0.Add(r.Settle)
			}},
		{"the load rose on one size and fell on the other: measured again", t0.Add(r.Settle), sig(3, 2, high, 0.5, 4500), pairedAt(10000, 10000, 7000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonLoadMoved}, nil},
		{"the load fell again in a trial measured again: judged", t0.Add(r.Settle), sig(3, 2, high, 0.5, 2666), func() State {
			s := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
			s.Remeasured = true
			return s
		}(), Decision{Shrink, ReasonNoGain}, func(s State) bool { return !s.Remeasured }},
		{"each pair gains at least half the margin: kept", t0.Add(r.Settle), sig(3, 2, high, 0.5, 342), pairedAt(1100, 1000, 1000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Hold, ReasonGain}, nil},
		{"one pair just under half the margin: not kept", t0.Add(r.Settle), sig(3, 2, high, 0.5, 341), pairedAt(1100, 1000, 1000, time.Millisecond, time.Millisecond, time.Millisecond), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.Tried >= 1.05*s.Baseline }},
		{"each pair at least half the margin quicker: kept", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 333), 975*time.Microsecond), asProbe(pairedAt(1000, 1000, 1000, 900*time.Microsecond, time.Millisecond, time.Millisecond)), Decision{Hold, ReasonFaster}, nil},
		{"one pair just under half the margin quicker: a plateau", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 333), 976*time.Microsecond), asProbe(pairedAt(1000, 1000, 1000, 900*time.Microsecond, time.Millisecond, time.Millisecond)), Decision{Grow, ReasonPlateau},
			func(s State) bool { return float64(s.TriedLatency) <= 0.95*float64(s.BaseLatency) }},
		{"each pair at least half the margin slower: given back", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 333), 1025*time.Microsecond), asProbe(pairedAt(1000, 1000, 1000, 1100*time.Microsecond, time.Millisecond, time.Millisecond)), Decision{Shrink, ReasonSlower}, nil},
		// Slower on the mean by MinGain, though not in both pairs: not
		// kept on trust, no jump; given back (with the climb).
		{"one pair just under half the margin slower, the mean 5% slower: no plateau, no jump", t0.Add(r.Settle), read(took(sig(3, 2, high-1, 0.5, 333), 1024*time.Microsecond), 3.5, 6), asProbe(pairedAt(1000, 1000, 1000, 1100*time.Microsecond, time.Millisecond, time.Millisecond)), Decision{Shrink, ReasonNoGain},
			func(s State) bool {
				return float64(s.TriedLatency) >= 1.05*float64(s.BaseLatency) && s.JumpTo == 0 && s.Backoff == r.Cooldown
			}},
		{"the mean 5% slower on a climb: the climb goes back", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 333), 1024*time.Microsecond), func() State {
			s := asProbe(pairedAt(1000, 1000, 1000, 1100*time.Microsecond, time.Millisecond, time.Millisecond))
			s.Plateau = 2
			return s
		}(), Decision{Shrink, ReasonClimbGivenBack}, func(s State) bool { return s.GiveBack == 2 && s.JumpTo == 0 }},
		{"one pair slower, the mean just under 5% slower: a plateau", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 333), 1000*time.Microsecond), asProbe(pairedAt(1000, 1000, 1000, 1099*time.Microsecond, time.Millisecond, time.Millisecond)), Decision{Grow, ReasonPlateau},
			func(s State) bool {
				return float64(s.TriedLatency) < 1.05*float64(s.BaseLatency) && float64(s.TriedLatency) > 1.04*float64(s.BaseLatency)
			}},
		// RPCs still waited to be written with every connection: the
		// client was past its capacity, its time in flight is its queue,
		// and only the throughput judges the trial.
		{"held, 5% less time in flight, writes waited with every connection: judged on throughput", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 317), 949*time.Microsecond), timed(trial), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.TrialWait == 0 && s.Judged }},
		{"held, 5% less time, an earlier interval with every connection waited: the climb goes back", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 949*time.Microsecond), func() State { s := timed(probeAt(r.PlateauSteps)); s.TrialWait = high; return s }(), Decision{Shrink, ReasonClimbGivenBack}, nil},
		{"held, 5% less time, the writes with every connection waited just under high: faster", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 949*time.Microsecond), func() State { s := timed(probeAt(r.PlateauSteps)); s.TrialWait = high - 1; return s }(), Decision{Hold, ReasonFaster},
			func(s State) bool { return s.KeptRate == 951 && s.TrialWait == 0 }},
		{"an interval with every connection notes its write wait", t0.Add(time.Second), sig(3, 2, high, 0.5, 300), fresh, Decision{Hold, ReasonSettling},
			func(s State) bool { return s.TrialWait == high }},
		{"a base interval does not", t0.Add(2 * time.Second), sig(3, 2, high, 0.5, 300), func() State { s := fresh; s.Phase = 1; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool { return s.TrialWait == 0 }},
		{"a gain notes the rate it kept the connection at", t0.Add(r.Settle), sig(3, 2, high, 0.5, 350), trial, Decision{Hold, ReasonGain},
			func(s State) bool { return s.KeptRate == 1050 }},
		{"a trial kept as the limit is gone notes its rate", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 317), trial, Decision{Hold, ReasonLimitGone},
			func(s State) bool { return s.KeptRate == 951 }},
		// A load that fell below the rate the pool last kept a connection
		// at, over LoadFell, for FallFor: the newest is tried again.
		{"the throughput at KeptRate/LoadFell: the fall's clock starts", t0, sig(3, 0, 0, 0.5, 200), State{KeptRate: 900}, Decision{Hold, ReasonIdleWait},
			func(s State) bool { return s.FellSince.Equal(t0) && !s.Trial }},
		{"just above KeptRate/LoadFell: the fall's clock stops", t0, sig(3, 0, 0, 0.5, 201), State{KeptRate: 900, FellSince: t0.Add(-time.Minute)}, Decision{Hold, ReasonIdleWait},
			func(s State) bool { return s.FellSince.IsZero() }},
		{"fallen for FallFor: the newest connection is tried again", t0.Add(r.FallFor), read(sig(3, 2, 0, 0.5, 200), 6, 7), State{KeptRate: 900, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonLoadFell},
			func(s State) bool {
				return s.Trial && s.Recheck && s.Probe && s.Jump && s.BaseConns == 2 && s.Phase == 0 && s.Active == 0 &&
					s.StartInFlight == 7 && s.FellSince.IsZero() && s.TrialStart.Equal(t0.Add(r.FallFor))
			}},
		{"fallen for just under FallFor: waits", t0.Add(r.FallFor - 1), sig(3, 2, 0, 0.5, 200), State{KeptRate: 900, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonCooldown},
			func(s State) bool { return s.FellSince.Equal(t0) }},
		{"fallen at min: nothing to try again", t0.Add(r.FallFor), sig(2, 2, 0, 0.5, 300), State{KeptRate: 900, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonCooldown}, nil},
		{"fallen to no RPC at all: left to idleness", t0.Add(r.FallFor), sig(3, 0, 0, 0.5, 0), State{KeptRate: 900, FellSince: t0}, Decision{Hold, ReasonIdleWait},
			func(s State) bool { return s.FellSince.IsZero() }},
		// The RPCs in flight must have fallen below 3/4 of State.Kept
		// too: a closed loop on a slowed host keeps them where they were.
		{"the throughput fell, the RPCs in flight at 3/4 of Kept: no fall (a closed loop on a slower host)", t0.Add(r.FallFor), read(sig(3, 2, 0, 0.5, 200), 6, 7), State{KeptRate: 900, Kept: 8, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonCooldown},
			func(s State) bool { return s.FellSince.IsZero() && !s.Trial }},
		{"the throughput fell, the RPCs in flight just below 3/4 of Kept: the newest is tried again", t0.Add(r.FallFor), read(sig(3, 2, 0, 0.5, 200), 5.9, 7), State{KeptRate: 900, Kept: 8, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonLoadFell},
			func(s State) bool { return s.Trial && s.Recheck }},
		{"load fell off: no recheck", t0.Add(r.FallFor), sig(3, 2, 0, 0.5, 200), State{KeptRate: 900, FellSince: t0, NextGrow: t0.Add(time.Hour)}, Decision{Hold, ReasonCooldown}, nil},
		// A connection tried again at the fallen load stays only if it
		// still pays; no climb, no jump, no plateau.
		{"tried again, gained: kept at the new rate", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 350), recheckAt(), Decision{Hold, ReasonRecheckKept},
			func(s State) bool {
				return !s.Trial && !s.Recheck && !s.Paying && s.KeptRate == 1050 && s.Plateau == 0 && s.GiveBack == 0 && s.JumpTo == 0 &&
					s.NextGrow.Equal(t0.Add(r.Settle+r.Cooldown))
			}},
		{"tried again, just under MinGain: given back", t0.Add(r.Settle), sig(3, 2, high-1, 0.5, 349), recheckAt(), Decision{Shrink, ReasonRecheckGivenBack},
			func(s State) bool {
				return !s.Trial && !s.Recheck && s.KeptRate == 3000 && s.Backoff == r.Cooldown && s.FailedRate == 1047 && s.JumpTo == 0 && s.GiveBack == 0
			}},
		{"tried again, 5% less time in flight: kept", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 949*time.Microsecond), timed(recheckAt()), Decision{Hold, ReasonRecheckKept}, nil},
		{"tried again, just under 5% less time: given back", t0.Add(r.Settle), took(sig(3, 2, high-1, 0.5, 317), 951*time.Microsecond), timed(recheckAt()), Decision{Shrink, ReasonRecheckGivenBack}, nil},
		{"tried again while the load rose under it: kept", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 4168), time.Millisecond), func() State {
			s := pairedAt(10000, 10000, 10000, time.Millisecond, time.Millisecond, time.Millisecond)
			s.Recheck, s.Probe, s.Jump = true, true, true
			return s
		}(), Decision{Hold, ReasonLoadRose}, func(s State) bool { return !s.Recheck && !s.Trial }},

		// A back-off is waived once the load has risen past the one its
		// failed trial was judged at.
		{"throughput at 1.5x the failed trial's: the back-off is waived", t0, sig(2, 2, 0, 0.5, 750), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.Trial && s.Backoff == 0 && s.FailedRate == 0 }},
		{"throughput just under 1.5x: the back-off holds", t0, sig(2, 2, 0, 0.5, 749), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		// ... and the RPCs in flight with it (Little's law): a throughput
		// risen at the same RPCs in flight is the host running faster.
		{"throughput at 1.5x, the same RPCs in flight: the back-off holds", t0, sig(2, 2, 0, 0.5, 750), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		{"throughput and RPCs in flight at 1.5x: the back-off is waived", t0, read(sig(2, 2, 0, 0.5, 750), 6, 6), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.Trial && s.Backoff == 0 && s.FailedRate == 0 }},
		{"throughput at 1.5x, RPCs in flight just under: the back-off holds", t0, read(sig(2, 2, 0, 0.5, 750), 5.99, 6), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		// ... or a backlog built (State.backlogPast): past capacity the
		// throughput cannot rise, so the RPCs in flight past twice the
		// trial's plus BacklogSlack (2*4+8 = 16), the throughput held.
		{"a backlog at the failed trial's throughput: the back-off is waived", t0, read(sig(2, 2, 0, 0.5, 500), 16.5, 17), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Grow, ReasonProbe},
			func(s State) bool { return s.Trial && s.Backoff == 0 && s.FailedRate == 0 }},
		{"RPCs in flight at exactly twice the trial's plus BacklogSlack: the back-off holds", t0, read(sig(2, 2, 0, 0.5, 500), 16, 17), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		{"RPCs in flight past BacklogSlack, the failed trial's unknown: the back-off holds", t0, read(sig(2, 2, 0, 0.5, 500), 40, 40), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		{"a backlog at a throughput just under the trial's: the back-off holds", t0, read(sig(2, 2, 0, 0.5, 499), 40, 40), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, FailedInFlight: 4, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		{"risen, but within a cooldown of the last change: holds", t0, sig(2, 2, 0, 0.5, 5000), State{NextGrow: t0.Add(time.Minute), Backoff: 20 * time.Second, FailedRate: 1000, LastChange: t0.Add(-r.Cooldown + 1)}, Decision{Hold, ReasonCooldown}, nil},
		{"the cooldown after a gain is not waived", t0, sig(2, 2, 0, 0.5, 5000), State{NextGrow: t0.Add(r.Cooldown), FailedRate: 1000, LastChange: t0.Add(-r.Cooldown)}, Decision{Hold, ReasonCooldown}, nil},
		{"a failed trial notes the throughput it was judged at", t0.Add(r.Settle), sig(3, 2, high, 0.5, 349), trial, Decision{Shrink, ReasonNoGain},
			func(s State) bool { return s.FailedRate == 1047 && s.Backoff == r.Cooldown }},
		{"a failed trial notes the RPCs in flight it was judged at, the larger side", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 349), 2*time.Millisecond), timed(trial), Decision{Shrink, ReasonSlower},
			func(s State) bool { return s.FailedRate == 1047 && math.Abs(s.FailedInFlight-2.094) < 1e-9 }},
		{"... the base's when it is the larger", t0.Add(r.Settle), took(sig(3, 2, high, 0.5, 349), 100*time.Microsecond), timed(trial), Decision{Shrink, ReasonNoGain},
			func(s State) bool { return math.Abs(s.FailedInFlight-1) < 1e-9 }},
		// The CPU per RPC of a gain: its base's RPCs took 10µs of CPU each
		// (cpuOf); 1050 RPCs against 1000 RPC/s is a gain of 5%.
		{"a gain at 5% more CPU per RPC: kept", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), 1050*10500*time.Nanosecond), cpuOf(probeAt(0)), Decision{Hold, ReasonGain},
			func(s State) bool {
				return s.Judged && s.BaseCPUPerRPC == 10*time.Microsecond && s.TriedCPUPerRPC == 10500*time.Nanosecond &&
					s.TrialCPU == 0 && s.BaseCPU == 0 && !s.CPUUnknown
			}},
		{"a gain at just over 5% more CPU per RPC: given back", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), 1050*10501*time.Nanosecond), cpuOf(probeAt(0)), Decision{Shrink, ReasonCostly},
			func(s State) bool {
				return !s.Trial && !s.Paying && s.Backoff == r.Cooldown && s.FailedRate == 1050 && s.GiveBack == 0 && s.TriedCPUPerRPC == 10501*time.Nanosecond
			}},
		{"a gain of 20% at 15% more CPU per RPC: kept", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 400), 1200*11500*time.Nanosecond), cpuOf(probeAt(0)), Decision{Hold, ReasonGain}, nil},
		{"a costly top of a climb: the climb goes back", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), 1050*11*time.Microsecond), cpuOf(probeAt(2)), Decision{Shrink, ReasonCostly},
			func(s State) bool { return s.GiveBack == 2 && s.Plateau == 0 && s.Backoff == r.Cooldown }},
		{"a costly gain with RPCs 5% quicker is not kept as faster", t0.Add(r.Settle), took(used(sig(3, 2, high-1, 0.5, 350), 1050*11*time.Microsecond), 900*time.Microsecond), timed(cpuOf(probeAt(0))), Decision{Shrink, ReasonCostly}, nil},
		{"a limit trial's costly gain: given back", t0.Add(r.Settle), used(sig(3, 2, high, 0.5, 350), 1050*11*time.Microsecond), cpuOf(trial), Decision{Shrink, ReasonCostly}, nil},
		{"tried again, a costly gain with RPCs 10% quicker: given back", t0.Add(r.Settle), took(used(sig(3, 2, high-1, 0.5, 350), 1050*11*time.Microsecond), 900*time.Microsecond), timed(cpuOf(recheckAt())), Decision{Shrink, ReasonRecheckGivenBack}, nil},
		{"CPU unknown on the last interval: judged on throughput", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), -1), cpuOf(probeAt(0)), Decision{Hold, ReasonGain},
			func(s State) bool { return s.BaseCPUPerRPC == 0 && s.TriedCPUPerRPC == 0 }},
		{"CPU unknown on an earlier interval: judged on throughput", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), 1050*11*time.Microsecond), func() State { s := cpuOf(probeAt(0)); s.CPUUnknown = true; return s }(), Decision{Hold, ReasonGain}, nil},
		{"no CPU on the base: judged on throughput", t0.Add(r.Settle), used(sig(3, 2, high-1, 0.5, 350), 1050*11*time.Microsecond), probeAt(0), Decision{Hold, ReasonGain}, nil},
		{"a base interval adds its CPU to the base's", t0.Add(time.Second), used(sig(3, 2, high-1, 0.5, 100), 3*time.Millisecond), func() State { s := fresh; s.Phase, s.TrialCPU = 1, time.Millisecond; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool {
				return s.BaseCPU == 3*time.Millisecond && s.TrialCPU == time.Millisecond && !s.CPUUnknown
			}},
		{"an interval with every connection adds its CPU to the trial's", t0.Add(time.Second), used(sig(3, 2, high-1, 0.5, 100), 3*time.Millisecond), func() State { s := fresh; s.BaseCPU = time.Millisecond; return s }(), Decision{Hold, ReasonSettling},
			func(s State) bool {
				return s.TrialCPU == 3*time.Millisecond && s.BaseCPU == time.Millisecond && !s.CPUUnknown
			}},
		{"an interval that cannot tell its CPU marks the trial", t0.Add(time.Second), used(sig(3, 2, high-1, 0.5, 100), -1), fresh, Decision{Hold, ReasonSettling},
			func(s State) bool { return s.CPUUnknown }},
		{"giving back: one per interval", t0, sig(3, 2, high, 0.5, 100), State{GiveBack: 2, NextGrow: t0.Add(time.Minute)}, Decision{Shrink, ReasonClimbGivenBack},
			func(s State) bool { return s.GiveBack == 1 && !s.Trial && s.LastChange.Equal(t0) }},
		{"given back, the back-off holds", t0, sig(2, 2, high, 0.5, 100), State{NextGrow: t0.Add(time.Minute)}, Decision{Hold, ReasonCooldown}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := r
			if tc.name == "probing off: no climb" {
				r.Probe = false
			}
			if tc.name == "load fell off: no recheck" {
				r.LoadFell = 0
			}
			if tc.name == "plateau steps 0 judges each alone" {
				r.PlateauSteps = 0
			}
			got, st := r.Decide(tc.now, tc.s, tc.st)
			if got != tc.want {
				t.Errorf("Decide: got %v/%v, want %v/%v", got.Action, got.Reason, tc.want.Action, tc.want.Reason)
			}
			if tc.wantSt != nil && !tc.wantSt(st) {
				t.Errorf("state after Decide: got %+v", st)
			}
		})
	}
}

// TestRuleProbeOff: without Rule.Probe only a write wait starts a trial,
// however many RPCs are in flight per connection.
func TestRuleProbeOff(t *testing.T) {
	r := ruleM(2, 4)
	r.Probe = false
	if d, _ := r.Decide(t0, sig(2, 8, r.WriteWaitHigh-1, 0.5, 100), State{}); d != (Decision{Hold, ReasonBalanced}) {
		t.Errorf("probing off, no write wait: got %v, want hold (%v)", d, ReasonBalanced)
	}
	if d, _ := r.Decide(t0, sig(2, 8, r.WriteWaitHigh, 0.5, 100), State{}); d != (Decision{Grow, ReasonLimit}) {
		t.Errorf("probing off, write wait at high: got %v, want grow (%v)", d, ReasonLimit)
	}
}

func TestRuleGrowFailed(t *testing.T) {
	r := ruleM(1, 4)
	tests := []struct {
		before, want time.Duration
	}{{0, r.Cooldown}, {r.Cooldown, 2 * r.Cooldown}, {r.MaxBackoff, r.MaxBackoff}}
	for _, tc := range tests {
		st := r.GrowFailed(t0, State{Trial: true, TrialStart: t0, Backoff: tc.before})
		if st.Trial || st.Backoff != tc.want || !st.NextGrow.Equal(t0.Add(tc.want)) {
			t.Errorf("GrowFailed with back-off %v: got trial %v back-off %v next %v, want false %v %v",
				tc.before, st.Trial, st.Backoff, st.NextGrow.Sub(t0), tc.want, tc.want)
		}
	}
	// A plateau step whose connection failed: those on trust go back.
	st := r.GrowFailed(t0, probeAt(2))
	if st.GiveBack != 2 || st.Plateau != 0 || st.Active != 0 || st.Phase != 0 {
		t.Errorf("GrowFailed on a plateau of 2: got give-back %d plateau %d active %d phase %d, want 2 0 0 0", st.GiveBack, st.Plateau, st.Active, st.Phase)
	}
}

// sim runs Rule.Decide on a fake clock, one decision a second, applies
// each to size and keeps the trail of reasons (a hold once per run of it).
// taking is the connections that take RPCs (fewer than size while a trial
// measures its base).
type sim struct {
	r     Rule
	st    State
	now   time.Time
	size  int
	trail []Reason
}

func (m *sim) taking() int {
	if m.st.Active > 0 {
		return min(m.st.Active, m.size)
	}
	return m.size
}

func (m *sim) tick(t *testing.T, s Signals) {
	t.Helper()
	m.now = m.now.Add(time.Second)
	d, next := m.r.Decide(m.now, s, m.st)
	m.st = next
	switch d.Action {
	case Grow:
		m.size++
	case Shrink:
		m.size--
	}
	if m.size < m.r.Min || m.size > m.r.Max {
		t.Fatalf("size %d after %v/%v, want %d..%d", m.size, d.Action, d.Reason, m.r.Min, m.r.Max)
	}
	if d.Action != Hold || len(m.trail) == 0 || m.trail[len(m.trail)-1] != d.Reason {
		m.trail = append(m.trail, d.Reason)
	}
}

// The policy alone, on a fake clock, through load that rises and falls:
// it grows while each trial pays, gives back the one that does not and
// backs off, and shrinks back to min once idle. It never leaves min..max.
func TestRuleSequence(t *testing.T) {
	m := &sim{r: ruleM(1, 3), now: t0, size: 1}
	// throughput the connections taking RPCs give under the heavy load: 2
	// connections double it, a third adds nothing.
	tp := map[int]uint64{1: 1000, 2: 2000, 3: 2000}
	run := func(ticks int, heavy bool) {
		for i := 0; i < ticks; i++ {
			s := sig(m.size, 0, 0, 0.3, 0)
			if heavy {
				s = sig(m.size, 8, time.Millisecond, 0.3, tp[m.taking()]/uint64(m.size))
			}
			m.tick(t, s)
		}
	}
	run(40, true) // one trial gains, two do not; each is measured for 4 s
	if m.size != 2 {
		t.Errorf("size under heavy load: got %d, want 2 (%v)", m.size, m.trail)
	}
	// Two trials in a row from 2 did not pay at this load: settled there,
	// no third trial while the back-off (MaxBackoff) lasts.
	want := []Reason{ReasonLimit, ReasonSettling, ReasonGain, ReasonCooldown, ReasonLimit, ReasonSettling, ReasonNoGain,
		ReasonCooldown, ReasonLimit, ReasonSettling, ReasonNoGain, ReasonSettled}
	if !slices.Equal(m.trail, want) {
		t.Fatalf("reasons: got %v, want %v", m.trail, want)
	}
	if m.st.Backoff != m.r.MaxBackoff || m.st.Failed != 2 {
		t.Errorf("back-off after two failed trials: got %v (%d failed), want %v (2)", m.st.Backoff, m.st.Failed, m.r.MaxBackoff)
	}
	run(2*int(m.r.IdleFor/time.Second)+5, false)
	if m.size != m.r.Min {
		t.Errorf("size after the load fell: got %d, want %d (%v)", m.size, m.r.Min, m.trail)
	}
}

// TestRuleLoadFell: the policy alone, on a fake clock, with 4 connections
// kept at 40k RPC/s when the open loop's rate falls to 10k with 8 RPCs in
// flight (more than one per connection, so never idle). Where a
// connection no longer pays at 10k, the pool tries the newest again and
// gives it back, one by one, down to min; where each still pays (the RPCs
// take 10% less time per connection added), the first is kept and the
// pool stays at 4.
func TestRuleLoadFell(t *testing.T) {
	run := func(t *testing.T, took func(conns int) time.Duration, ticks int) *sim {
		m := &sim{r: ruleM(1, 4), now: t0, size: 4, st: State{KeptRate: 40000, Kept: 40}}
		for i := 0; i < ticks; i++ {
			s := read(sig(m.size, 2, 0, 0.5, uint64(10000/m.size)), 8, 9)
			for c := range s.Conns {
				s.Conns[c].Spent = time.Duration(s.Conns[c].Completed) * took(m.taking())
			}
			m.tick(t, s)
		}
		return m
	}
	count := func(trail []Reason, r Reason) (n int) {
		for _, x := range trail {
			if x == r {
				n++
			}
		}
		return n
	}
	t.Run("no longer pays", func(t *testing.T) {
		// Three rechecks of 3 s fallen and 4 s measured each.
		m := run(t, func(int) time.Duration { return time.Millisecond }, 3*(int(ruleM(1, 4).FallFor/time.Second)+4)+3)
		if m.size != 1 || count(m.trail, ReasonRecheckGivenBack) != 3 || count(m.trail, ReasonRecheckKept) != 0 {
			t.Errorf("size %d, want 1 after three connections given back: %v", m.size, m.trail)
		}
	})
	t.Run("still pays", func(t *testing.T) {
		m := run(t, func(conns int) time.Duration { return time.Duration(1000-100*conns) * time.Microsecond }, 40)
		if m.size != 4 || count(m.trail, ReasonLoadFell) != 1 || count(m.trail, ReasonRecheckKept) != 1 || m.st.KeptRate != 10000 {
			t.Errorf("size %d, kept at %v RPC/s, want 4 kept once at 10000: %v", m.size, m.st.KeptRate, m.trail)
		}
	})
}

// TestRulePlateau: the policy alone, on a fake clock, at 2 RPCs in flight
// and no write wait, where the gain is not monotone in the size (as
// measured here: pool:2 no better than one connection, pool:4 1.2x). The
// climb walks through the sizes that held and keeps the top that paid;
// where nothing pays it gives every connection back and backs off.
func TestRulePlateau(t *testing.T) {
	climb := func(t *testing.T, tp map[int]uint64, ticks int) (int, []Reason, State) {
		m := &sim{r: ruleM(1, 8), now: t0, size: 1}
		for i := 0; i < ticks; i++ {
			m.tick(t, twoOf(sig(m.size, 0, 0, 0.5, tp[m.taking()]/uint64(m.size))))
		}
		return m.size, m.trail, m.st
	}
	t.Run("the top paid", func(t *testing.T) {
		size, trail, _ := climb(t, map[int]uint64{1: 10000, 2: 9800, 3: 10100, 4: 12000, 5: 12000, 6: 12000, 7: 12000, 8: 12000}, 60)
		if size != 4 {
			t.Errorf("size: got %d, want 4 (%v)", size, trail)
		}
		want := []Reason{ReasonProbe, ReasonSettling, ReasonPlateau, ReasonSettling, ReasonPlateau, ReasonSettling, ReasonGain}
		for i, w := range want {
			if i >= len(trail) || trail[i] != w {
				t.Fatalf("reasons: got %v, want them to start with %v", trail, want)
			}
		}
	})
	t.Run("nothing paid", func(t *testing.T) {
		// One climb: four trials of 4 s from 1 to 5 connections, then
		// the four given back one a second.
		size, trail, st := climb(t, map[int]uint64{1: 10000, 2: 10000, 3: 10000, 4: 10000, 5: 10000}, 1+4*4+3)
		if size != 1 {
			t.Errorf("size: got %d, want 1 (%v)", size, trail)
		}
		gaveBack := 0
		for _, r := range trail {
			if r == ReasonClimbGivenBack {
				gaveBack++
			}
		}
		if gaveBack != 4 || st.Backoff != ruleM(1, 8).Cooldown {
			t.Errorf("want the four connections given back one by one and the first back-off: got %v, back-off %v", trail, st.Backoff)
		}
	})
}

// TestRuleJump: the policy alone, on a fake clock, at 8 RPCs in flight
// with no write wait, where (as measured here) 2 to 7 connections did no
// better than one and 8, one per RPC, did 1.3x. The climb stops at its
// third connection on trust; the jump then grows to 8, one an interval,
// and judges 8 against one connection. Where 8 does not pay either,
// every connection goes back; with Jump off, or more RPCs in flight
// than Max allows connections, there is no jump.
func TestRuleJump(t *testing.T) {
	climb := func(t *testing.T, r Rule, inflight int64, tp map[int]uint64, ticks int) *sim {
		m := &sim{r: r, now: t0, size: 1}
		for i := 0; i < ticks; i++ {
			s := sig(m.size, 0, 0, 0.5, tp[min(m.taking(), 8)]/uint64(m.size))
			s.Conns[0].InFlight = inflight
			m.tick(t, read(s, float64(inflight), inflight))
		}
		return m
	}
	count := func(trail []Reason, r Reason) int {
		n := 0
		for _, x := range trail {
			if x == r {
				n++
			}
		}
		return n
	}
	flat := map[int]uint64{1: 30000, 2: 30000, 3: 30000, 4: 30000, 5: 30000, 6: 30000, 7: 30000, 8: 30000}
	perRPC := maps(flat, 8, 40000)
	t.Run("one per RPC paid", func(t *testing.T) {
		m := climb(t, ruleM(1, 8), 8, perRPC, 40)
		if m.size != 8 {
			t.Errorf("size: got %d, want 8 (%v)", m.size, m.trail)
		}
		want := []Reason{ReasonProbe, ReasonSettling, ReasonPlateau, ReasonSettling, ReasonPlateau, ReasonSettling, ReasonPlateau, ReasonSettling,
			ReasonJump, ReasonJump, ReasonJump, ReasonSettling, ReasonGain}
		if len(m.trail) < len(want) || !slices.Equal(m.trail[:len(want)], want) {
			t.Fatalf("reasons: got %v, want them to start with %v", m.trail, want)
		}
		if m.st.Baseline != 30000 || m.st.Tried != 40000 {
			t.Errorf("the jump was judged on %.0f against %.0f RPC/s, want 8 connections' 40000 against one's 30000", m.st.Tried, m.st.Baseline)
		}
	})
	t.Run("nothing paid", func(t *testing.T) {
		// The climb to 5 (17 s), the jump to 8 (3 s), its trial (4 s),
		// then seven connections given back one a second.
		m := climb(t, ruleM(1, 8), 8, flat, 17+2+5+6)
		if m.size != 1 || count(m.trail, ReasonJump) != 3 || count(m.trail, ReasonClimbGivenBack) != 7 {
			t.Errorf("got size %d after %v, want 3 jumps, then 7 connections given back", m.size, m.trail)
		}
		if m.st.Backoff != m.r.Cooldown || m.st.Jump || m.st.JumpTo != 0 {
			t.Errorf("after the jump: back-off %v, jump %v to %d; want the first back-off and no jump", m.st.Backoff, m.st.Jump, m.st.JumpTo)
		}
	})
	t.Run("a jump that only held", func(t *testing.T) {
		// At 3 in flight the second connection cost a third, so the
		// climb did not hold and the jump went to 3, which held without
		// gaining: both go back, and no climb goes on from the jump.
		m := climb(t, ruleM(1, 8), 3, map[int]uint64{1: 30000, 2: 20000, 3: 30000, 4: 30000, 5: 30000}, 1+4+1+4+2)
		want := []Reason{ReasonProbe, ReasonSettling, ReasonJump, ReasonSettling, ReasonClimbGivenBack, ReasonClimbGivenBack}
		if m.size != 1 || len(m.trail) < len(want) || !slices.Equal(m.trail[:len(want)], want) {
			t.Errorf("got size %d after %v, want 1 after %v", m.size, m.trail, want)
		}
	})
	t.Run("changing", func(t *testing.T) {
		// State.Changing (what Pool.Settling reads) holds from the first
		// trial's connection through the climb, the jump and its trial
		// until the last connection that did not pay is given back, not
		// in the back-off after, and again from the next probe: here,
		// exactly while the pool is above its one connection.
		m := &sim{r: ruleM(1, 8), now: t0, size: 1}
		for i := 0; i < 17+2+5+6+3; i++ {
			s := sig(m.size, 0, 0, 0.5, flat[min(m.taking(), 8)]/uint64(m.size))
			s.Conns[0].InFlight = 8
			m.tick(t, read(s, 8, 8))
			if got, want := m.st.Changing(), m.size > 1; got != want {
				t.Fatalf("tick %d, size %d after %v (trial %v, jump to %d, give back %d): Changing %v, want %v",
					i+1, m.size, m.trail, m.st.Trial, m.st.JumpTo, m.st.GiveBack, got, want)
			}
		}
		if count(m.trail, ReasonClimbGivenBack) != 7 || count(m.trail, ReasonProbe) != 2 {
			t.Errorf("got %v; want the climb given back, then the back-off, then a probe again", m.trail)
		}
	})
	t.Run("off", func(t *testing.T) {
		r := ruleM(1, 8)
		r.Jump = false
		if m := climb(t, r, 8, perRPC, 40); count(m.trail, ReasonJump) != 0 || m.size == 8 {
			t.Errorf("Jump off: got size %d after %v, want no jump", m.size, m.trail)
		}
	})
	t.Run("more in flight than max", func(t *testing.T) {
		if m := climb(t, ruleM(1, 8), 9, perRPC, 40); count(m.trail, ReasonJump) != 0 {
			t.Errorf("9 in flight, max 8: got %v, want no jump", m.trail)
		}
	})
	t.Run("a grow fails", func(t *testing.T) {
		// The jump's second grow (6 -> 7) fails.
		m := climb(t, ruleM(1, 8), 8, flat, 18)
		if m.trail[len(m.trail)-1] != ReasonJump || m.size != 7 || m.st.JumpTo != 8 {
			t.Fatalf("got size %d after %v, want a jump to 8 growing to 7", m.size, m.trail)
		}
		m.st = m.r.GrowFailed(m.now, m.st)
		if m.st.GiveBack != 5 || m.st.JumpTo != 0 || m.st.Jump {
			t.Errorf("a failed grow in a jump: give back %d, jump %v to %d; want the 5 above the base back and no jump", m.st.GiveBack, m.st.Jump, m.st.JumpTo)
		}
	})
}

// maps is tp with the throughput at size n set to v.
func maps(tp map[int]uint64, n int, v uint64) map[int]uint64 {
	out := make(map[int]uint64, len(tp))
	for k, x := range tp {
		out[k] = x
	}
	out[n] = v
	return out
}

// TestRulePairedTrial: a trial is measured B A A B, and judged on the two
// sides, so a drift of the host's speed during the trial weighs on both
// alike: a throughput rising 10% a second, whatever the size, is no gain,
// and a connection that adds 10% on top of it is one.
func TestRulePairedTrial(t *testing.T) {
	r := ruleM(1, 4)
	// closed: the callers keep 4 RPCs in flight whatever the throughput
	// (a closed loop); else each RPC takes 1ms, so the RPCs in flight
	// follow the throughput (an open loop's offered rate).
	closed := false
	run := func(gain, slope float64) (Decision, State, []int) {
		now := t0
		d, st := r.Decide(now, sig(1, 2, r.WriteWaitHigh, 0.5, 1000), State{})
		if d != (Decision{Grow, ReasonLimit}) {
			t.Fatalf("start: got %v/%v, want a limit trial", d.Action, d.Reason)
		}
		var active []int
		for k := 0; d.Reason == ReasonLimit || d.Reason == ReasonSettling; k++ {
			size := 2
			if st.Active > 0 {
				size = st.Active
			}
			drift := 1000 * (1 + slope*float64(k))
			if size == 2 {
				drift *= gain
			}
			now = now.Add(time.Second)
			each := time.Millisecond
			if closed {
				each = time.Duration(4 * float64(time.Second) / drift)
			}
			d, st = r.Decide(now, took(sig(2, 2, r.WriteWaitHigh, 0.5, uint64(drift/2)), each), st)
			active = append(active, st.Active)
		}
		return d, st, active
	}
	// A drift of 10% a second is, over a trial, a load that rose by more
	// than LoadMoved (A2 over A1: 1.3): kept, with nothing judged.
	if d, _, _ := run(1, 0.1); d != (Decision{Hold, ReasonLoadRose}) {
		t.Errorf("10%%/s drift: got %v/%v, want the load rose", d.Action, d.Reason)
	}
	// The same drift at a fixed 4 RPCs in flight is the host's speed, not
	// a load: measured again.
	closed = true
	if d, st, _ := run(1, 0.1); d != (Decision{Hold, ReasonLoadMoved}) || !st.Remeasured {
		t.Errorf("10%%/s drift in a closed loop: got %v/%v, want the trial measured again", d.Action, d.Reason)
	}
	closed = false
	// The pair rule alone, from here on.
	r.LoadMoved = 0
	d, st, active := run(1, 0.1)
	if want := []int{1, 1, 0, 0}; !slices.Equal(active, want) {
		t.Errorf("connections taking RPCs after each interval: got %v, want %v (B A A B)", active, want)
	}
	if d != (Decision{Shrink, ReasonNoGain}) || st.Baseline != st.Tried {
		t.Errorf("drift alone: got %v/%v on %.0f against %.0f RPC/s, want no gain on equal sides", d.Action, d.Reason, st.Tried, st.Baseline)
	}
	// A drift of 2% a second would read as an 8% gain or loss measured
	// before and after; each pair (B A, A B) is off by the drift of one
	// interval, so a gain shows in both.
	if d, st, _ := run(1.1, 0.02); d != (Decision{Hold, ReasonGain}) {
		t.Errorf("10%% on top of a 2%%/s drift: got %v/%v on %.0f against %.0f RPC/s, want a gain", d.Action, d.Reason, st.Tried, st.Baseline)
	}
	// The price of asking both pairs: a drift of 10% a second is, over
	// four intervals, a step, and a step (an open loop's offered rate
	// changing inside the trial) shows in one pair only. A 10% gain on
	// top of it shows as 0% in the first pair: not kept.
	if d, st, _ := run(1.1, 0.1); d != (Decision{Shrink, ReasonNoGain}) || st.Tried < 1.05*st.Baseline {
		t.Errorf("10%% on top of a 10%%/s drift: got %v/%v on %.0f against %.0f RPC/s, want no gain though the sums gained", d.Action, d.Reason, st.Tried, st.Baseline)
	}
	// Settle is rounded up to whole blocks: 5s is two.
	r.Settle = 5 * time.Second
	if _, _, active := run(1, 0.1); len(active) != 8 {
		t.Errorf("settle 5s: got %d intervals, want 8", len(active))
	}
}

func TestRuleTrialTime(t *testing.T) {
	for _, tc := range []struct {
		settle, interval, want time.Duration
	}{
		{0, time.Second, 4 * time.Second},
		{time.Second, time.Second, 4 * time.Second},
		{4 * time.Second, time.Second, 4 * time.Second},
		{4*time.Second + 1, time.Second, 8 * time.Second},
		{50 * time.Millisecond, 10 * time.Millisecond, 80 * time.Millisecond},
	} {
		r := ruleM(1, 2)
		r.Settle, r.Interval = tc.settle, tc.interval
		if got := r.TrialTime(); got != tc.want {
			t.Errorf("settle %v, interval %v: got %v, want %v", tc.settle, tc.interval, got, tc.want)
		}
	}
}

// TestRuleIdleToMin: the policy alone, on a fake clock, from 5
// connections. With no RPC at all the pool is back at min once IdleFor has
// passed and then a Cooldown a connection more; with one RPC in flight on
// one connection (idle, but not empty) it shrinks one per IdleFor.
func TestRuleIdleToMin(t *testing.T) {
	r := ruleM(1, 8)
	toMin := func(s func(n int) Signals) time.Duration {
		m := &sim{r: r, now: t0, size: 5}
		for i := 1; i <= 600; i++ {
			m.tick(t, s(m.size))
			if m.size == r.Min {
				return time.Duration(i) * time.Second
			}
		}
		return -1
	}
	empty := toMin(func(n int) Signals { return sig(n, 0, 0, 0.1, 0) })
	// Idle from the first interval; four shrinks: IdleFor, then three
	// Cooldowns.
	if want := r.Interval + r.IdleFor + 3*r.Cooldown; empty != want {
		t.Errorf("with no RPC: back at min after %v, want %v", empty, want)
	}
	trickle := toMin(func(n int) Signals { return oneEach(n, 1) })
	if want := 4*r.IdleFor + 3*time.Second; trickle < 4*r.IdleFor || trickle > want {
		t.Errorf("with one RPC in flight: back at min after %v, want %v to %v", trickle, 4*r.IdleFor, want)
	}
}

// TestRuleSettleTime: the pool's settling time follows its rule: one
// decision interval, then a trial, a cooldown and a decision interval per
// connection it can add, up to the most connections the rule lets the
// in-flight count reach: Max once more than one RPC is in flight when the
// rule probes (it climbs while each connection pays), else
// ceil(in-flight / InFlightPerConn), at most Max.
func TestRuleSettleTime(t *testing.T) {
	def := DefaultRule(1, 8)
	perConn := def.TrialTime() + def.Cooldown + def.Interval
	noProbe := def
	noProbe.Probe = false
	half := noProbe
	half.InFlightPerConn = 2
	any := def
	any.InFlightPerConn = 0
	for _, tc := range []struct {
		name     string
		rule     Rule
		inflight int
		want     time.Duration
	}{
		{"default, 1 in flight: never grows", def, 1, 0},
		{"default, 2 in flight: climbs to max 8", def, 2, def.Interval + 7*perConn},
		{"no probe, 2 in flight: reaches 2", noProbe, 2, def.Interval + perConn},
		{"no probe, 4 in flight: reaches 4", noProbe, 4, def.Interval + 3*perConn},
		{"default, 8 in flight: reaches max 8", def, 8, def.Interval + 7*perConn},
		{"default, 64 in flight: still max 8", def, 64, def.Interval + 7*perConn},
		{"2 per connection, 5 in flight: reaches 3", half, 5, def.Interval + 2*perConn},
		{"2 per connection, 2 in flight: never grows", half, 2, 0},
		{"no in-flight threshold: reaches max", any, 1, def.Interval + 7*perConn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.SettleTime(tc.inflight); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDefaultRuleP: the default rule (rule s: rule p with rule q's jump
// to four connections per RPC in flight and costly gains given back only
// on a client that used 3/4 of its CPUs, rule r's backlog step and held
// trials given back for their CPU, and rule s's LimitOnRise) counts no
// CPU as busy, so a
// busy client probes and takes a write wait at WriteWaitHigh for a limit
// at once, as one with CPU to spare does; it judges each trial over three
// blocks (12 s) and keeps nothing on trust. A trial that held without
// gaining goes back (without the jump), or jumps.
func TestDefaultRuleP(t *testing.T) {
	r := DefaultRule(1, 8)
	if r.CPUBusyMax != 0 || r.TrialTime() != 12*time.Second || r.PlateauSteps != 0 || !r.Jump || r.JumpPerRPC != 4 || r.CostlyCPU != 0.75 {
		t.Fatalf("DefaultRule: CPU busy max %v, trial %v, plateau %d, jump %v at %v per RPC, costly CPU %v; want 0, 12s, 0, true at 4, 0.75",
			r.CPUBusyMax, r.TrialTime(), r.PlateauSteps, r.Jump, r.JumpPerRPC, r.CostlyCPU)
	}
	if !r.LimitOnRise || !r.HeldCostly || r.BacklogStep != 2 {
		t.Errorf("DefaultRule: LimitOnRise %v, HeldCostly %v, BacklogStep %v; want true, true, 2", r.LimitOnRise, r.HeldCostly, r.BacklogStep)
	}
	if got, want := r.SettleTime(2), time.Second+7*(12*time.Second+5*time.Second+time.Second); got != want {
		t.Errorf("SettleTime(2) for 1..8: got %v, want %v", got, want)
	}
	high := r.WriteWaitHigh
	gated := r
	gated.CPUBusyMax = 0.8
	for _, tc := range []struct {
		name string
		r    Rule
		s    Signals
		want Decision
	}{
		{"crowded, CPU 1.5 busy: probes", r, sig(1, 4, high-1, 1.5, 100), Decision{Grow, ReasonProbe}},
		{"crowded, CPU 1.5 busy, a write wait at high once: grows", r, sig(1, 4, high, 1.5, 100), Decision{Grow, ReasonLimit}},
		{"CPUBusyMax 0.8, crowded, CPU 1.5 busy: no probe", gated, sig(1, 4, high-1, 1.5, 100), Decision{Hold, ReasonBusyNoProbe}},
		{"CPUBusyMax 0.8, a write wait at high once: holds", gated, sig(1, 4, high, 1.5, 100), Decision{Hold, ReasonBusyWait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := tc.r.Decide(t0, tc.s, State{}); got != tc.want {
				t.Errorf("got %v/%v, want %v/%v", got.Action, got.Reason, tc.want.Action, tc.want.Reason)
			}
		})
	}
	t.Run("busy", func(t *testing.T) {
		for _, tc := range []struct {
			max, cpu float64
			want     bool
		}{{0, 0, false}, {0, 2, false}, {0.8, 0.8, true}, {0.8, 0.8 - 1e-9, false}, {0.8, -1, false}, {math.Inf(1), 2, false}} {
			rr := r
			rr.CPUBusyMax = tc.max
			if got := rr.busy(Signals{CPUBusy: tc.cpu}); got != tc.want {
				t.Errorf("CPUBusyMax %v, CPUBusy %v: busy %v, want %v", tc.max, tc.cpu, got, tc.want)
			}
		}
	})
	t.Run("validate", func(t *testing.T) {
		for _, v := range []float64{0, 0.8, math.Inf(1)} {
			rr := r
			rr.CPUBusyMax = v
			if err := rr.validate(); err != nil {
				t.Errorf("CPUBusyMax %v: %v", v, err)
			}
		}
		for _, v := range []float64{-0.1, math.NaN()} {
			rr := r
			rr.CPUBusyMax = v
			if err := rr.validate(); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "CPU busy max") {
				t.Errorf("CPUBusyMax %v: got %v, want an invalid option naming the CPU busy max", v, err)
			}
		}
	})
	// A probe at 4 in flight on a client 1 CPU busy: measured twelve
	// intervals, then judged. Two connections carrying 1.3x are kept;
	// two carrying the same go back (no trust, no jump), and the pool
	// backs off.
	probe := func(t *testing.T, r Rule, tp map[int]uint64, ticks int) *sim {
		m := &sim{r: r, now: t0, size: 1}
		for i := 0; i < ticks; i++ {
			s := sig(m.size, 4/int64(m.size), 0, 1.0, tp[m.taking()]/uint64(m.size))
			m.tick(t, read(s, 4, 4))
		}
		return m
	}
	t.Run("a gain kept after 12 intervals", func(t *testing.T) {
		m := probe(t, r, map[int]uint64{1: 10000, 2: 13000, 3: 13000}, 1+11)
		if m.size != 2 || m.trail[len(m.trail)-1] != ReasonSettling {
			t.Fatalf("11 intervals into the trial: size %d after %v, want 2, still settling", m.size, m.trail)
		}
		m.tick(t, read(sig(2, 2, 0, 1.0, 6500), 4, 4))
		if m.size != 2 || m.trail[len(m.trail)-1] != ReasonGain {
			t.Errorf("12 intervals into the trial: size %d after %v, want 2 kept on its gain", m.size, m.trail)
		}
	})
	t.Run("a trial that held goes back", func(t *testing.T) {
		rr := r
		rr.Jump = false
		m := probe(t, rr, map[int]uint64{1: 10000, 2: 10000, 3: 10000}, 1+12)
		want := []Reason{ReasonProbe, ReasonSettling, ReasonNoGain}
		if m.size != 1 || !slices.Equal(m.trail, want) || m.st.Backoff != r.Cooldown {
			t.Errorf("got size %d after %v (back-off %v), want 1 after %v and the first back-off", m.size, m.trail, m.st.Backoff, want)
		}
	})
	t.Run("a trial that held jumps to four connections per RPC, at most max", func(t *testing.T) {
		m := probe(t, r, map[int]uint64{1: 10000, 2: 10000, 3: 10000}, 1+12+5)
		if m.size != 8 || m.st.JumpTo != 8 || !m.st.Jump || m.trail[len(m.trail)-1] != ReasonJump {
			t.Errorf("got size %d (jump to %d) after %v, want a jump to 8", m.size, m.st.JumpTo, m.trail)
		}
	})
}
