// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"math"
	"testing"
	"time"
)

func TestConstantPacer(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		want []time.Duration
	}{
		// 1 send/s: sends at 0, 1 s, 2 s.
		{"1/s", 1, []time.Duration{0, time.Second, 2 * time.Second}},
		// 1000/s: 1 ms apart.
		{"1000/s", 1000, []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}},
		// 3/s: 333.33 ms apart, computed from the count so no drift.
		{"3/s", 3, []time.Duration{0, 333333333, 666666666, time.Second}},
		// 0.5/s: 2 s apart.
		{"0.5/s", 0.5, []time.Duration{0, 2 * time.Second, 4 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPacer(Constant, tc.rate, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				if got := p.Next(); got != want {
					t.Errorf("send %d: got %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestConstantPacerNoDrift(t *testing.T) {
	p, _ := NewPacer(Constant, 3000, 0)
	var last time.Duration
	for i := 0; i <= 3_000_000; i++ {
		last = p.Next()
	}
	// send 3,000,000 at 3000/s is at exactly 1000 s.
	if want := 1000 * time.Second; last != want {
		t.Errorf("got %v, want %v", last, want)
	}
}

func TestPoissonPacer(t *testing.T) {
	tests := []struct {
		rate float64
		seed uint64
	}{
		{1000, 1}, {20000, 2}, {5, 3},
	}
	for _, tc := range tests {
		p, err := NewPacer(Poisson, tc.rate, tc.seed)
		if err != nil {
			t.Fatal(err)
		}
		const n = 200000
		var prev, last time.Duration
		var sumSq float64
		for i := 0; i < n; i++ {
			d := p.Next()
			if d < prev {
				t.Fatalf("rate %v: offset %d went back: %v after %v", tc.rate, i, d, prev)
			}
			g := (d - prev).Seconds()
			sumSq += g * g
			prev, last = d, d
		}
		mean := last.Seconds() / (n - 1)
		// Mean rate within 1% (the standard error over 2e5 gaps is 0.22%).
		if got := 1 / mean; math.Abs(got-tc.rate)/tc.rate > 0.01 {
			t.Errorf("rate %v: got mean rate %.2f, want within 1%%", tc.rate, got)
		}
		// Exponential gaps: standard deviation equals the mean (CV 1).
		sd := math.Sqrt(sumSq/(n-1) - mean*mean)
		if cv := sd / mean; math.Abs(cv-1) > 0.02 {
			t.Errorf("rate %v: got coefficient of variation %.3f, want 1 ± 0.02", tc.rate, cv)
		}
	}
	// The same seed gives the same schedule.
	a, _ := NewPacer(Poisson, 100, 7)
	b, _ := NewPacer(Poisson, 100, 7)
	for i := 0; i < 100; i++ {
		if x, y := a.Next(), b.Next(); x != y {
			t.Fatalf("send %d: got %v and %v from one seed, want equal", i, x, y)
		}
	}
}

func TestNewPacerBadInput(t *testing.T) {
	tests := []struct {
		arrival string
		rate    float64
	}{
		{Constant, 0}, {Constant, -1}, {Poisson, math.NaN()}, {Constant, math.Inf(1)}, {"bursty", 10},
	}
	for _, tc := range tests {
		if _, err := NewPacer(tc.arrival, tc.rate, 0); err == nil {
			t.Errorf("NewPacer(%q, %v): got nil error, want one", tc.arrival, tc.rate)
		}
	}
}

// TestCapDue: a capped closed caller's next call is due on its schedule
// when that is ahead, and at once when it has passed, with the schedule
// moved by the lag so that the calls it missed are not sent in a burst
// above the cap (a paused server must not get a catch-up burst).
func TestCapDue(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	gap := 10 * time.Millisecond
	tests := []struct {
		name              string
		next              time.Duration // the pacer's offset from start
		now               time.Time
		wantDue, wantBase time.Time
	}{
		{"ahead: wait for the schedule", 3 * gap, t0.Add(2 * gap), t0.Add(3 * gap), t0},
		{"exactly due", 3 * gap, t0.Add(3 * gap), t0.Add(3 * gap), t0},
		{"behind by 1 s: now, and the schedule moves 1 s", 3 * gap, t0.Add(3*gap + time.Second), t0.Add(3*gap + time.Second), t0.Add(time.Second)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			due, base := capDue(t0, tc.next, tc.now)
			if !due.Equal(tc.wantDue) || !base.Equal(tc.wantBase) {
				t.Errorf("got due %v base %v, want %v and %v", due.Sub(t0), base.Sub(t0), tc.wantDue.Sub(t0), tc.wantBase.Sub(t0))
			}
		})
	}
	// After a 1 s stall, the calls that follow keep the gap: the next is
	// one gap after the late one, not at once.
	_, base := capDue(t0, 3*gap, t0.Add(3*gap+time.Second))
	if due, _ := capDue(base, 4*gap, t0.Add(3*gap+time.Second)); due.Sub(t0) != 4*gap+time.Second {
		t.Errorf("the call after a late one: due at %v, want %v", due.Sub(t0), 4*gap+time.Second)
	}
}
