// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package adapt

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// sig is one second's signals of n ready connections with mean RPCs in
// flight, a write wait, and rps RPCs completed.
func sig(n int, mean float64, wait time.Duration, rps float64) Signals {
	s := Signals{Interval: time.Second, Reads: 20, MeanInFlight: mean, PeakInFlight: int64(math.Ceil(mean))}
	for i := 0; i < n; i++ {
		c := ConnSignals{Ready: true, WriteWait: wait, Completed: uint64(rps) / uint64(n)}
		s.Conns = append(s.Conns, c)
	}
	return s
}

func TestSteady(t *testing.T) {
	r := DefaultRule(1, 4)
	w := r.WriteWait
	backedOff := State{NextGrow: t0.Add(time.Second), Backoff: 5 * time.Second, FailedInFlight: 4}
	notReady := sig(2, 4, w, 1000)
	notReady.Conns[1].Ready = false
	for _, tc := range []struct {
		name  string
		s     Signals
		st    State
		want  Decision
		phase Phase
	}{
		{"RPCs wait to be written, two a connection: a trial", sig(1, 2, w, 1000), State{}, Decision{Grow, ReasonLimit}, Trial},
		{"no wait, two RPCs on one connection: a queue, a trial", sig(1, 2, w-1, 1000), State{}, Decision{Grow, ReasonQueue}, Trial},
		{"no wait, 1.5 a connection: a queue, a trial", sig(2, 3, 0, 1000), State{}, Decision{Grow, ReasonQueue}, Trial},
		{"no wait, just under Queue over one a connection: balanced", sig(2, 2.49, 0, 1000), State{}, Decision{Hold, ReasonBalanced}, Steady},
		{"a queue in the back-off", sig(1, 2, 0, 1000), backedOff, Decision{Hold, ReasonBackoff}, Steady},
		{"a queue at max", sig(4, 8, 0, 1000), State{}, Decision{Hold, ReasonAtMax}, Steady},
		{"one RPC a connection, waiting: nothing to spread", sig(2, 2, w, 1000), State{}, Decision{Hold, ReasonBalanced}, Steady},
		{"at max", sig(4, 8, w, 1000), State{}, Decision{Hold, ReasonAtMax}, Steady},
		{"in the back-off", sig(1, 5.9, w, 1000), backedOff, Decision{Hold, ReasonBackoff}, Steady},
		{"the load rose by LoadRise: the back-off waived", sig(1, 6, w, 1000), backedOff, Decision{Grow, ReasonLimit}, Trial},
		{"fewer RPCs than connections, one fewer would do: giving back", sig(3, 2, 0, 1000), State{}, Decision{Hold, ReasonIdleWait}, GivingBack},
		{"past one fewer: balanced", sig(3, 2.01, 0, 1000), State{}, Decision{Hold, ReasonBalanced}, Steady},
		{"idle at min", sig(1, 0, 0, 0), State{}, Decision{Hold, ReasonBalanced}, Steady},
		{"a connection not ready: nothing judged", notReady, State{}, Decision{Hold, ReasonNotReady}, Steady},
	} {
		d, st := r.Decide(t0, tc.s, tc.st)
		if d != tc.want || st.Phase != tc.phase {
			t.Errorf("%s: got %v %q in phase %v, want %v %q in %v", tc.name, d.Action, d.Reason, st.Phase, tc.want.Action, tc.want.Reason, tc.phase)
		}
	}
	// Queue 0 never reads a queue as a candidate.
	r0 := r
	r0.Queue = 0
	if d, _ := r0.Decide(t0, sig(1, 8, 0, 1000), State{}); d != (Decision{Hold, ReasonBalanced}) {
		t.Errorf("Queue 0, 8 RPCs on one connection: got %v %q, want a hold", d.Action, d.Reason)
	}
	// The back-off ends at NextGrow exactly.
	if d, _ := r.Decide(t0.Add(time.Second), sig(1, 2, w, 1000), backedOff); d.Action != Grow {
		t.Errorf("at NextGrow: got %v %q, want a growth", d.Action, d.Reason)
	}
}

// runTrial starts a trial from one connection and feeds it the intervals
// of one B A A B block: with[i] and without[i] are the RPCs of the i-th
// interval with every connection and with the new one parked, and their
// mean times in flight lat. It returns the decisions and the last state.
func runTrial(t *testing.T, r Rule, with, without [2]float64, latWith, latWithout time.Duration) ([]Decision, State) {
	t.Helper()
	now := t0
	d, st := r.Decide(now, sig(1, 4, r.WriteWait, 1000), State{})
	if d.Action != Grow {
		t.Fatalf("start: got %v %q", d.Action, d.Reason)
	}
	var ds []Decision
	for k, rps := range []float64{with[0], without[0], without[1], with[1]} {
		lat, n := latWith, 2
		if k == 1 || k == 2 {
			lat = latWithout
		}
		// B A A B: the new connection parked over the middle two.
		if got, parked := st.active(), k == 1 || k == 2; parked != (got == 1) {
			t.Fatalf("interval %d: active %d, want the base (1) only in the block's middle two", k, got)
		}
		now = now.Add(time.Second)
		// Little's law: the mean in flight is the rate times the time.
		d, st = r.Decide(now, sig(n, rps*lat.Seconds(), 0, rps), st)
		ds = append(ds, d)
	}
	return ds, st
}

func TestTrialJudged(t *testing.T) {
	r := DefaultRule(1, 4)
	r.Trial = 4 * time.Second  // one block
	ms := 4 * time.Millisecond // 4 RPCs in flight at 1000 RPC/s
	for _, tc := range []struct {
		name          string
		with, without [2]float64
		latW, latWO   time.Duration
		want          Decision
		phase         Phase
		backoff       time.Duration
	}{
		{"10% more in both pairs: kept", [2]float64{1100, 1100}, [2]float64{1000, 1000}, ms, ms, Decision{Hold, ReasonGain}, Steady, 0},
		{"4% more: given back", [2]float64{1040, 1040}, [2]float64{1000, 1000}, ms, ms, Decision{Shrink, ReasonNoGain}, Steady, r.Cooldown},
		{"10% more overall, one pair only 2%: given back", [2]float64{1180, 1020}, [2]float64{1000, 1000}, ms, ms, Decision{Shrink, ReasonNoGain}, Steady, r.Cooldown},
		{"the same throughput, RPCs 10% quicker in both pairs: kept", [2]float64{1000, 1000}, [2]float64{1000, 1000}, 3600 * time.Microsecond, ms, Decision{Hold, ReasonFaster}, Steady, 0},
		{"the same throughput, RPCs 4% quicker: given back", [2]float64{1000, 1000}, [2]float64{1000, 1000}, 3840 * time.Microsecond, ms, Decision{Shrink, ReasonNoGain}, Steady, r.Cooldown},
	} {
		ds, st := runTrial(t, r, tc.with, tc.without, tc.latW, tc.latWO)
		for _, d := range ds[:3] {
			if d != (Decision{Hold, ReasonTrial}) {
				t.Errorf("%s: got %v %q inside the trial, want %q", tc.name, d.Action, d.Reason, ReasonTrial)
			}
		}
		if got := ds[3]; got.Action == Shrink && math.Abs(st.FailedInFlight-4) > 0.25 {
			t.Errorf("%s: a failed trial at 4 in flight noted %v in flight, want about 4 (LoadRise)", tc.name, st.FailedInFlight)
		}
		if got := ds[3]; got != tc.want || st.Phase != tc.phase || st.Backoff != tc.backoff || !st.Verdict.Judged {
			t.Errorf("%s: got %v %q, phase %v, back-off %v, verdict %+v; want %v %q, %v, %v", tc.name, got.Action, got.Reason, st.Phase, st.Backoff, st.Verdict, tc.want.Action, tc.want.Reason, tc.phase, tc.backoff)
		}
	}
}

// A failed trial doubles the back-off up to MaxBackoff; one that pays
// resets it, and the next trial may start at once.
func TestBackoff(t *testing.T) {
	r := DefaultRule(1, 4)
	st := State{}
	for _, want := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		st = r.GrowFailed(t0, st)
		if st.Backoff != want || !st.NextGrow.Equal(t0.Add(want)) {
			t.Fatalf("back-off: got %v until %v, want %v", st.Backoff, st.NextGrow.Sub(t0), want)
		}
	}
	st.Phase, st.T = Trial, TrialState{Base: 1}
	if _, st = r.kept(st, ReasonGain); st.Backoff != 0 || st.FailedInFlight != 0 {
		t.Errorf("after a gain: back-off %v, failed in flight %v, want both reset", st.Backoff, st.FailedInFlight)
	}
}

// The park guard's early unpark keeps the trial's connection at once;
// outside a parked interval it is ignored.
func TestTrialQueued(t *testing.T) {
	r := DefaultRule(1, 4)
	_, st := r.Decide(t0, sig(1, 4, r.WriteWait, 1000), State{})
	_, st = r.Decide(t0.Add(time.Second), sig(2, 4, 0, 1000), st) // B: next interval parked
	if limit := st.T.parkLimit(); limit != 2*4+BacklogSlack {
		t.Errorf("park limit: got %d, want twice the start's peak plus %d", limit, BacklogSlack)
	}
	s := sig(2, 40, 0, 1000)
	s.Unparked = true
	d, st := r.Decide(t0.Add(2*time.Second), s, st)
	if d != (Decision{Hold, ReasonQueued}) || st.Phase != Steady || st.active() != 0 {
		t.Errorf("unparked: got %v %q in phase %v, want %q and steady", d.Action, d.Reason, st.Phase, ReasonQueued)
	}
}

// Each edge of StealBand, and the cap on the intervals a trial leaves out.
func TestTrialSteal(t *testing.T) {
	r := DefaultRule(1, 4)
	r.StealBand = 0.25 // exact in binary, as are the shares below
	mid := State{Phase: Trial, T: TrialState{Base: 1, K: 1, StealLo: 0.5, StealHi: 0.5, StealSeen: true}}
	at := func(steal float64) Signals { s := sig(2, 4, 0, 1000); s.Steal = steal; return s }
	for _, tc := range []struct {
		name   string
		steal  float64
		want   string
		k      int
		lo, hi float64
	}{
		{"at the band's top: counted", 0.75, ReasonTrial, 2, 0.5, 0.75},
		{"just above: left out, the side measured again", 0.7500001, ReasonStolen, 1, 0.5, 0.5},
		{"at the band's bottom: counted", 0.25, ReasonTrial, 2, 0.25, 0.5},
		{"just below: left out", 0.2499999, ReasonStolen, 1, 0.5, 0.5},
		{"unknown: counted", -1, ReasonTrial, 2, 0.5, 0.5},
	} {
		d, st := r.Decide(t0, at(tc.steal), mid)
		if d.Reason != tc.want || st.T.K != tc.k || st.T.StealLo != tc.lo || st.T.StealHi != tc.hi {
			t.Errorf("%s: got %q, K %d, band %v..%v; want %q, %d, %v..%v", tc.name, d.Reason, st.T.K, st.T.StealLo, st.T.StealHi, tc.want, tc.k, tc.lo, tc.hi)
		}
	}
	capped := mid
	capped.T.Stolen = 2*int(r.TrialTime()/r.Interval) - 1
	d, st := r.Decide(t0, at(1), capped)
	if d != (Decision{Shrink, ReasonHostBusy}) || st.Phase != Steady || st.Backoff != r.Cooldown || st.FailedInFlight != 0 {
		t.Errorf("at the cap: got %v %q, phase %v, back-off %v; want %q, steady, %v", d.Action, d.Reason, st.Phase, st.Backoff, ReasonHostBusy, r.Cooldown)
	}
	off := r
	off.StealBand = 0
	if d, _ := off.Decide(t0, at(1), mid); d.Reason != ReasonTrial {
		t.Errorf("band off: got %q, want any steal counted", d.Reason)
	}
}

// A trial whose connections are not all ready measures again from its
// start once they are.
func TestTrialNotReady(t *testing.T) {
	r := DefaultRule(1, 4)
	st := State{Phase: Trial, T: TrialState{Base: 1, K: 3, StartPeak: 4}}
	st.T.Pairs[0][0] = Side{RPCs: 1000, Time: time.Second}
	s := sig(2, 4, 0, 1000)
	s.Conns[1].Ready = false
	d, st := r.Decide(t0, s, st)
	if d.Reason != ReasonNotReady || st.Phase != Trial || st.T.K != 0 || st.T.Pairs != [2][2]Side{} || st.T.StartPeak != 4 {
		t.Errorf("got %q and trial %+v, want %q and the trial's measurement restarted", d.Reason, st.T, ReasonNotReady)
	}
}

func TestGivingBack(t *testing.T) {
	r := DefaultRule(1, 4)
	_, st := r.Decide(t0, sig(4, 1, 0, 1000), State{})
	if st.Phase != GivingBack {
		t.Fatalf("phase %v, want giving back", st.Phase)
	}
	if d, _ := r.Decide(t0.Add(r.IdleFor-time.Nanosecond), sig(4, 1, 0, 1000), st); d != (Decision{Hold, ReasonIdleWait}) {
		t.Errorf("before IdleFor: got %v %q", d.Action, d.Reason)
	}
	now := t0.Add(r.IdleFor)
	d, st := r.Decide(now, sig(4, 1, 0, 1000), st)
	if d != (Decision{Shrink, ReasonIdle}) || !st.IdleSince.Equal(now) {
		t.Errorf("at IdleFor: got %v %q, idle since %v; want a give-back and IdleFor again", d.Action, d.Reason, st.IdleSince.Sub(t0))
	}
	// No RPC at all: the next waits only a Cooldown.
	now = now.Add(r.IdleFor)
	_, st = r.Decide(now, sig(3, 0, 0, 0), st)
	if d, _ := r.Decide(now.Add(r.Cooldown), sig(2, 0, 0, 0), st); d != (Decision{Shrink, ReasonIdle}) {
		t.Errorf("a Cooldown after a give-back with no RPC: got %v %q", d.Action, d.Reason)
	}
	// The load returns: steady again, and a limit starts a trial at once.
	if d, st := r.Decide(now.Add(time.Second), sig(2, 3, r.WriteWait, 1000), st); d.Action != Grow || st.Phase != Trial {
		t.Errorf("load back: got %v %q in phase %v, want a trial", d.Action, d.Reason, st.Phase)
	}
	// The last give-back to min ends the phase.
	last := State{Phase: GivingBack, IdleSince: t0}
	if d, st := r.Decide(t0.Add(r.IdleFor), sig(2, 0, 0, 0), last); d.Action != Shrink || st.Phase != Steady {
		t.Errorf("down to min: got %v in phase %v, want a shrink and steady", d.Action, st.Phase)
	}
}

// TestKnownAnswer runs the policy against a modelled server that serves
// one RPC at a time per connection at 500 RPC/s each (as rpclab serve
// --max-concurrent-streams 1 --delay 2ms): the right size is the RPCs in
// flight. It grows to it, keeps it, and once the load falls gives back
// to it.
func TestKnownAnswer(t *testing.T) {
	r := DefaultRule(1, 8)
	for _, inflight := range []int{1, 2, 4, 8} {
		n, now, st := 1, t0, State{}
		interval := func(load int) Decision {
			taking := n
			if a := st.active(); a > 0 {
				taking = a
			}
			rps := 500 * float64(min(taking, load))
			var wait time.Duration
			if load > taking {
				wait = 2 * time.Millisecond
			}
			d, next := r.Decide(now, sig(n, float64(load), wait, rps), st)
			st = next
			switch d.Action {
			case Grow:
				n++
			case Shrink:
				n--
			}
			now = now.Add(time.Second)
			return d
		}
		for range r.SettleTime(inflight) / time.Second {
			interval(inflight)
		}
		if n != inflight || st.Phase == Trial {
			t.Errorf("at %d in flight: %v after SettleTime %v: got %d connections, phase %v", inflight, now.Sub(t0), r.SettleTime(inflight), n, st.Phase)
		}
		for range 600 {
			if d := interval(inflight); d.Action != Hold {
				t.Fatalf("at %d in flight, settled: got %v %q", inflight, d.Action, d.Reason)
			}
		}
		for range 10 * r.IdleFor / time.Second {
			interval(1)
		}
		if n != 1 {
			t.Errorf("from %d in flight down to 1: got %d connections, want 1", inflight, n)
		}
	}
}

func TestSettleTime(t *testing.T) {
	r := DefaultRule(1, 8)
	for _, tc := range []struct {
		inflight int
		want     time.Duration
	}{{1, 0}, {2, 14 * time.Second}, {8, 92 * time.Second}, {64, 92 * time.Second}} {
		if got := r.SettleTime(tc.inflight); got != tc.want {
			t.Errorf("SettleTime(%d): got %v, want %v", tc.inflight, got, tc.want)
		}
	}
	if got := r.SettleWait(); got != 24*time.Second {
		t.Errorf("SettleWait: got %v, want 24s", got)
	}
	for _, tc := range []struct{ trial, want time.Duration }{{0, 4 * time.Second}, {4 * time.Second, 4 * time.Second}, {4*time.Second + 1, 8 * time.Second}, {12 * time.Second, 12 * time.Second}} {
		r.Trial = tc.trial
		if got := r.TrialTime(); got != tc.want {
			t.Errorf("TrialTime of %v: got %v, want %v", tc.trial, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultRule(1, 1024)
	if err := ok.Validate(1024); err != nil {
		t.Fatalf("DefaultRule(1, 1024): %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Rule)
	}{
		{"min 0", func(r *Rule) { r.Min = 0 }},
		{"max below min", func(r *Rule) { r.Min, r.Max = 3, 2 }},
		{"max above the bound", func(r *Rule) { r.Max = 1025 }},
		{"max at MaxInt", func(r *Rule) { r.Max = math.MaxInt }},
		{"interval 0", func(r *Rule) { r.Interval = 0 }},
		{"negative trial", func(r *Rule) { r.Trial = -1 }},
		{"max back-off below cooldown", func(r *Rule) { r.MaxBackoff = r.Cooldown - 1 }},
		{"negative min gain", func(r *Rule) { r.MinGain = -0.01 }},
		{"negative queue", func(r *Rule) { r.Queue = -0.5 }},
		{"NaN queue", func(r *Rule) { r.Queue = math.NaN() }},
		{"NaN min gain", func(r *Rule) { r.MinGain = math.NaN() }},
		{"load rise 1", func(r *Rule) { r.LoadRise = 1 }},
		{"steal band above 1", func(r *Rule) { r.StealBand = 1.01 }},
		{"negative steal band", func(r *Rule) { r.StealBand = -0.01 }},
	} {
		r := ok
		tc.edit(&r)
		if err := r.Validate(1024); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
	}
}

// TestLatency: the RPCs' mean time in flight is the mean in flight times
// the interval over the RPCs completed (Little's law), the count at the
// interval's end standing for the mean when the pool took no read.
func TestLatency(t *testing.T) {
	s := Signals{Interval: 2 * time.Second, Reads: 10, MeanInFlight: 3, Conns: []ConnSignals{{Completed: 400, InFlight: 9}, {Completed: 200}}}
	if got, want := s.Latency(), 10*time.Millisecond; got != want {
		t.Errorf("3 in flight over 2 s, 600 completed: got %v, want %v", got, want)
	}
	s.Reads = 0
	if got, want := s.Latency(), 30*time.Millisecond; got != want {
		t.Errorf("no read, 9 in flight at the end: got %v, want %v", got, want)
	}
	s.Conns = []ConnSignals{{InFlight: 9}}
	if got := s.Latency(); got != 0 {
		t.Errorf("none completed: got %v, want 0", got)
	}
}
