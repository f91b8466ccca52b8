// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// jumpRun drives r on a fake clock for ticks intervals with inflight RPCs
// in flight and no write wait, GOMAXPROCS procs (Signals.Procs): with k
// connections taking RPCs the pool completes tp[k] RPC/s at cpu[k] of
// the process's CPU each (the values at 1 when k is missing). CPUBusy
// reads 0.9 throughout, as it did on the pinned client here.
func jumpRun(t *testing.T, r Rule, inflight int64, procs int, tp map[int]float64, cpu map[int]time.Duration, ticks int) *sim {
	t.Helper()
	m := &sim{r: r, now: t0, size: 1}
	for i := 0; i < ticks; i++ {
		k := m.taking()
		rate, per := tp[k], cpu[k]
		if rate == 0 {
			rate = tp[1]
		}
		if per == 0 {
			per = cpu[1]
		}
		s := sig(m.size, 0, 0, 0.9, uint64(rate)/uint64(m.size))
		s.Conns[0].InFlight, s.Procs = inflight, procs
		s = used(read(s, float64(inflight), inflight), time.Duration(rate)*per)
		m.tick(t, s)
	}
	return m
}

func countOf(trail []Reason, r Reason) int {
	n := 0
	for _, x := range trail {
		if x == r {
			n++
		}
	}
	return n
}

// TestRuleJumpPerRPC: with Rule.JumpPerRPC, a probe that did not pay
// jumps to that many connections per RPC in flight, at most Max, and
// judges that size against the base. As measured on this 1-CPU client
// (docs/measured/2026-12-01/adaptive-p-settled), at 2 RPCs in flight a
// second connection did no better than one while eight did 1.14-1.21x.
func TestRuleJumpPerRPC(t *testing.T) {
	rule := func(per float64) Rule {
		r := DefaultRule(1, 8)
		r.Jump, r.JumpPerRPC = true, per
		return r
	}
	flat := map[int]float64{1: 10000, 2: 10000, 3: 10000, 4: 10000, 5: 10000, 6: 10000, 7: 10000, 8: 10000}
	eight := maps8(flat, 12000)
	cpu := map[int]time.Duration{1: 40 * time.Microsecond}
	// A probe (1 + 12 intervals), six grows of the jump, its trial (1 +
	// 12), and room to spare.
	const ticks = 1 + 12 + 6 + 1 + 12 + 3
	t.Run("four per RPC: from 2 in flight to 8, kept on its gain", func(t *testing.T) {
		m := jumpRun(t, rule(4), 2, 1, eight, cpu, ticks)
		// The trail keeps one Hold of a kind in a row (sim.tick).
		want := append([]Reason{ReasonProbe, ReasonSettling}, rep(ReasonJump, 6)...)
		want = append(want, ReasonSettling, ReasonGain)
		if m.size != 8 || len(m.trail) < len(want) || !slices.Equal(m.trail[:len(want)], want) {
			t.Fatalf("got size %d after %v, want 8 after %v", m.size, m.trail, want)
		}
		if m.st.Baseline != 10000 || m.st.Tried != 12000 {
			t.Errorf("judged %.0f against %.0f RPC/s, want 8 connections' 12000 against one's 10000", m.st.Tried, m.st.Baseline)
		}
	})
	t.Run("three per RPC: to 6", func(t *testing.T) {
		m := jumpRun(t, rule(3), 2, 1, flat, cpu, 1+12+4)
		if m.size != 6 || m.st.JumpTo != 0 || !m.st.Trial || !m.st.Jump {
			t.Errorf("got size %d (jump to %d, trial %v) after %v, want a trial of 6", m.size, m.st.JumpTo, m.st.Trial, m.trail)
		}
	})
	t.Run("eight per RPC: at most Max", func(t *testing.T) {
		if m := jumpRun(t, rule(8), 2, 1, eight, cpu, 1+12); m.st.JumpTo != 8 {
			t.Errorf("jumping: to %d after %v, want to 8, the max", m.st.JumpTo, m.trail)
		}
		m := jumpRun(t, rule(8), 2, 1, eight, cpu, ticks)
		if m.size != 8 || countOf(m.trail, ReasonJump) != 6 || countOf(m.trail, ReasonGain) != 1 {
			t.Errorf("got size %d after %v, want 8 kept after six jumps", m.size, m.trail)
		}
	})
	for _, per := range []float64{1, 0} {
		t.Run("one per RPC: no jump from 2 at 2 in flight", func(t *testing.T) {
			m := jumpRun(t, rule(per), 2, 1, eight, cpu, ticks)
			if m.size != 1 || countOf(m.trail, ReasonJump) != 0 || countOf(m.trail, ReasonNoGain) == 0 || m.trail[2] != ReasonNoGain {
				t.Errorf("JumpPerRPC %v: got size %d after %v, want the probe given back and no jump", per, m.size, m.trail)
			}
		})
	}
	t.Run("half per RPC counts as one: from 4 in flight to 4", func(t *testing.T) {
		m := jumpRun(t, rule(0.5), 4, 1, flat, cpu, 1+12+3)
		if m.size != 4 || m.st.JumpTo != 0 || !m.st.Trial || !m.st.Jump {
			t.Errorf("got size %d (jump to %d, trial %v) after %v, want a trial of 4", m.size, m.st.JumpTo, m.st.Trial, m.trail)
		}
	})
	t.Run("nothing paid: all given back", func(t *testing.T) {
		// Judged on the 31st interval (eight to one: one back then),
		// the other six back one an interval.
		m := jumpRun(t, rule(4), 2, 1, flat, cpu, 31+6)
		if m.size != 1 || countOf(m.trail, ReasonClimbGivenBack) != 7 || m.st.Backoff != m.r.Cooldown || m.st.GiveBack != 0 {
			t.Errorf("got size %d after %v (back-off %v), want 7 given back and the first back-off", m.size, m.trail, m.st.Backoff)
		}
	})
	t.Run("negative: an error", func(t *testing.T) {
		r := rule(-1)
		if err := r.validate(); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("JumpPerRPC -1: got %v, want ErrInvalidOption", err)
		}
	})
}

// TestRuleCostlyCPU: with Rule.CostlyCPU, a gain whose CPU per RPC rose
// by more than its throughput is given back only when the process used at
// least that share of its CPUs over the base's intervals (or cannot
// tell). The figures are pool:8 against one connection at 4 RPCs in
// flight measured here: 1.18x the throughput at 1.46x the CPU per RPC,
// the client using half its one CPU (20000 RPC/s at 25µs).
func TestRuleCostlyCPU(t *testing.T) {
	rule := func(costly float64) Rule {
		r := DefaultRule(1, 8)
		r.Jump, r.JumpPerRPC, r.CostlyCPU = true, 4, costly
		return r
	}
	tp := map[int]float64{1: 20000, 2: 20000, 3: 20000, 4: 20000, 5: 20000, 6: 20000, 7: 20000, 8: 23600}
	cpu := map[int]time.Duration{1: 25 * time.Microsecond, 8: 36500 * time.Nanosecond}
	// A probe (1 + 12 intervals), the jump's last five grows, its trial
	// (1 + 12): the last interval judges it.
	const ticks = 1 + 12 + 5 + 1 + 12
	for _, tc := range []struct {
		name   string
		costly float64
		procs  int
		want   Reason
		size   int
	}{
		{"half a CPU used, CostlyCPU 0.75: kept", 0.75, 1, ReasonGain, 8},
		{"used just under CostlyCPU: kept", 0.5000001, 1, ReasonGain, 8},
		{"used at CostlyCPU: given back", 0.5, 1, ReasonCostly, 7},
		{"a quarter of two CPUs used, CostlyCPU 0.4: kept", 0.4, 2, ReasonGain, 8},
		{"CostlyCPU 0: always given back", 0, 1, ReasonCostly, 7},
		{"CPUs unknown: given back", 0.75, 0, ReasonCostly, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := jumpRun(t, rule(tc.costly), 4, tc.procs, tp, cpu, ticks)
			if m.trail[len(m.trail)-1] != tc.want || m.size != tc.size || (tc.want == ReasonCostly && m.st.GiveBack != 6) {
				t.Fatalf("got size %d (give back %d) after %v, want %v at %d", m.size, m.st.GiveBack, m.trail, tc.want, tc.size)
			}
			if m.st.BaseCPUPerRPC != 25*time.Microsecond || m.st.TriedCPUPerRPC != 36500*time.Nanosecond {
				t.Errorf("CPU per RPC judged: %v against %v, want 36.5µs against 25µs", m.st.TriedCPUPerRPC, m.st.BaseCPUPerRPC)
			}
		})
	}
	t.Run("negative: an error", func(t *testing.T) {
		r := rule(-0.1)
		if err := r.validate(); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("CostlyCPU -0.1: got %v, want ErrInvalidOption", err)
		}
	})
}

// maps8 is tp with the throughput at 8 connections set to v.
func maps8(tp map[int]float64, v float64) map[int]float64 {
	out := make(map[int]float64, len(tp))
	for k, x := range tp {
		out[k] = x
	}
	out[8] = v
	return out
}

// rep is n copies of r.
func rep(r Reason, n int) []Reason {
	out := make([]Reason, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// TestRuleJumpAfterLoss: only a closed loop's probe jumps (no read saw
// more RPCs in flight than the mean, rounded up). A probe that lost
// throughput jumps (under a
// closed loop its RPCs take longer by as much, Little's law), as does one
// that held it within MinGain with its RPCs as much slower; one whose
// RPCs in flight (throughput times time in flight) rose by MinGain, as
// an open loop's do when they queue, though not in both pairs (not
// ReasonSlower), does not.
func TestRuleJumpAfterLoss(t *testing.T) {
	r := DefaultRule(1, 8)
	r.Settle = 4 * time.Second // one block: pairedAt's
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		s    Signals
		st   State
		want Decision
	}{
		{"lost a tenth of the throughput, RPCs a ninth slower: jumps",
			read(took(sig(3, 1, 0, 0.5, 3000), 1111*time.Microsecond), 3, 3), asProbe(pairedAt(9000, 10000, 10000, 1111*time.Microsecond, ms, ms)), Decision{Grow, ReasonJump}},
		{"held the throughput, RPCs a tenth slower in one pair: no jump",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 3), asProbe(pairedAt(10000, 10000, 10000, 1200*time.Microsecond, ms, ms)), Decision{Shrink, ReasonNoGain}},
		{"0.951x the throughput, RPCs 1.051x slower (the closed loop here): jumps",
			read(took(sig(3, 1, 0, 0.5, 3170), 1051*time.Microsecond), 3, 3), asProbe(pairedAt(9510, 10000, 10000, 1051*time.Microsecond, ms, ms)), Decision{Grow, ReasonJump}},
		{"the same throughput, RPCs in flight up 5%: no jump",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 3), asProbe(pairedAt(10000, 10000, 10000, 1101*time.Microsecond, ms, ms)), Decision{Shrink, ReasonNoGain}},
		{"the same throughput, RPCs in flight up just under 5%: jumps",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 3), asProbe(pairedAt(10000, 10000, 10000, 1097*time.Microsecond, ms, ms)), Decision{Grow, ReasonJump}},
		{"an open loop's: a read saw one more RPC in flight than the mean, rounded up: no jump",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 4), asProbe(pairedAt(10000, 10000, 10000, ms, ms, ms)), Decision{Shrink, ReasonNoGain}},
		{"the most RPCs in flight at the mean rounded up: jumps",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 2.01, 3), asProbe(pairedAt(10000, 10000, 10000, ms, ms, ms)), Decision{Grow, ReasonJump}},
		{"an earlier interval's read past the mean: no jump",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 3), func() State { s := asProbe(pairedAt(10000, 10000, 10000, ms, ms, ms)); s.AllPeak = 4; return s }(), Decision{Shrink, ReasonNoGain}},
		{"held the throughput, RPCs as quick: jumps",
			read(took(sig(3, 1, 0, 0.5, 3333), ms), 3, 3), asProbe(pairedAt(10000, 10000, 10000, ms, ms, ms)), Decision{Grow, ReasonJump}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := r.Decide(t0.Add(r.Settle), tc.s, tc.st)
			if got != tc.want {
				t.Fatalf("got %v/%v (judged %.0f against %.0f RPC/s, %v against %v), want %v/%v",
					got.Action, got.Reason, st.Tried, st.Baseline, st.TriedLatency, st.BaseLatency, tc.want.Action, tc.want.Reason)
			}
			if tc.want.Reason == ReasonJump && st.JumpTo != 8 {
				t.Errorf("jump to %d, want 8 (four per RPC for 2 in flight)", st.JumpTo)
			}
		})
	}
}
