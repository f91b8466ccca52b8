// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
)

// fakeClockOf is the scheduler's clock on fc (testutil's fake clock):
// sleeping moves it on at once, and time passes only when a test says the
// client spent it.
func fakeClockOf(fc *testutil.FakeClock) clock {
	return clock{
		now: fc.Now,
		sleepUntil: func(ctx context.Context, at time.Time) bool {
			if ctx.Err() != nil {
				return false
			}
			fc.Set(at)
			return true
		},
	}
}

// TestSchedulerOnFakeClock runs the open loop's schedule with no wall time:
// a client that keeps up, one whose every send costs more than the gap
// between sends, and one whose callers are all busy. The schedule ends at
// the interval's end on the clock whatever happens; what was due and not
// sent is counted.
func TestSchedulerOnFakeClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name             string
		rate             float64
		warmup, interval time.Duration
		// handCost is the clock time each hand-off takes; busy: no caller
		// is ever idle, and waiting for one takes waitCost (0: none comes).
		// late: how long past the interval sends already due may go on.
		handCost, waitCost, late time.Duration
		busy                     bool
		wantSent                 int64
		wantUnsent               int64
		wantHits                 int64
		wantLagMax               time.Duration
		wantMeasureAt            time.Duration
	}{
		// 1000 rps for 1 s after 100 ms of warm-up: every send on time.
		{name: "keeps up", rate: 1000, warmup: 100 * time.Millisecond, interval: time.Second,
			wantSent: 1000, wantMeasureAt: 100 * time.Millisecond},
		// 100000 rps, each send costs 50 µs: 20000 made in the 1 s
		// interval, the other 80000 unsent, and the schedule still ends
		// at 1 s (before issue 16 it went on for 5 s).
		{name: "client too slow", rate: 100000, interval: time.Second, handCost: 50 * time.Microsecond,
			wantSent: 20000, wantUnsent: 80000, wantLagMax: 800 * time.Millisecond},
		// The same client allowed 100 ms past the interval: 2000 more
		// sends, and it stops there.
		{name: "client too slow, late allowed", rate: 100000, interval: time.Second, handCost: 50 * time.Microsecond,
			late: 100 * time.Millisecond, wantSent: 22000, wantUnsent: 78000, wantLagMax: 880 * time.Millisecond},
		// A client that keeps up does not use the allowance.
		{name: "keeps up, late allowed", rate: 1000, interval: time.Second, late: 100 * time.Millisecond, wantSent: 1000},
		// The same client with 100 ms of warm-up: it is behind when the
		// interval begins, drops the late warm-up sends and starts the
		// interval on time.
		{name: "behind in warm-up", rate: 100000, warmup: 100 * time.Millisecond, interval: time.Second,
			handCost: 50 * time.Microsecond, wantSent: 20000, wantUnsent: 80000, wantLagMax: 800 * time.Millisecond,
			wantMeasureAt: 100 * time.Millisecond},
		// Every caller busy, one comes free 1 ms after each send asks:
		// 1000 sends made at 10000 rps, each counted as a hit.
		{name: "callers busy", rate: 10000, interval: time.Second, busy: true, waitCost: time.Millisecond,
			wantSent: 1000, wantUnsent: 9000, wantHits: 1000, wantLagMax: 900 * time.Millisecond},
		// No caller ever comes free: nothing is sent, and the wait ends at
		// the interval's end.
		{name: "callers stuck", rate: 10000, interval: time.Second, busy: true,
			wantUnsent: 10000, wantHits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := testutil.NewFakeClock(start)
			pacer, err := NewPacer(Constant, tc.rate, 0)
			if err != nil {
				t.Fatal(err)
			}
			var measureAt time.Time
			s := &scheduler{
				pacer: pacer, clock: fakeClockOf(fc), warmup: tc.warmup, end: tc.warmup + tc.interval, late: tc.late, conns: 3,
				hand: func(job) bool {
					if tc.busy {
						return false
					}
					fc.Advance(tc.handCost)
					return true
				},
				handWait: func(_ context.Context, _ job, by time.Time) bool {
					if tc.waitCost == 0 || fc.Now().Add(tc.waitCost).After(by) {
						fc.Set(by)
						return false
					}
					fc.Advance(tc.waitCost)
					return true
				},
				onMeasure: func(at time.Time) { measureAt = at },
			}
			r := s.run(context.Background(), start)
			if r.interrupted {
				t.Fatal("got interrupted, want a whole run")
			}
			if r.sent != tc.wantSent || r.unsent != tc.wantUnsent || r.hits != tc.wantHits {
				t.Errorf("got sent %d unsent %d hits %d, want %d, %d, %d", r.sent, r.unsent, r.hits, tc.wantSent, tc.wantUnsent, tc.wantHits)
			}
			want := start.Add(tc.warmup + tc.interval)
			if tc.wantUnsent > 0 {
				want = want.Add(tc.late) // it used its allowance and stopped there
			}
			if got := r.stopped; !got.Equal(want) {
				t.Errorf("stopped at %v, want %v (the interval's end, and the allowance if behind)", got.Sub(start), want.Sub(start))
			}
			if tc.wantSent > 0 && !measureAt.Equal(start.Add(tc.wantMeasureAt)) {
				t.Errorf("interval's first send at %v, want %v", measureAt.Sub(start), tc.wantMeasureAt)
			}
			lagMax := time.Duration(stats.Merge(r.lag).Hist.Max())
			if lagMax < tc.wantLagMax*99/100 || lagMax > tc.wantLagMax*101/100+time.Microsecond {
				t.Errorf("got schedule lag max %v, want %v", lagMax, tc.wantLagMax)
			}
		})
	}
}

// TestSchedulerStopsWhenCancelled: a cancelled schedule stops at once and
// says it was interrupted.
func TestSchedulerStopsWhenCancelled(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := testutil.NewFakeClock(start)
	ctx, cancel := context.WithCancel(context.Background())
	pacer, _ := NewPacer(Constant, 1000, 0)
	n := 0
	s := &scheduler{pacer: pacer, clock: fakeClockOf(fc), end: time.Second, conns: 1,
		hand: func(job) bool {
			if n++; n == 10 {
				cancel()
			}
			return true
		},
		handWait: func(context.Context, job, time.Time) bool { return false },
	}
	r := s.run(ctx, start)
	if !r.interrupted || r.sent != 10 || r.unsent != 0 {
		t.Errorf("got interrupted %v, sent %d, unsent %d; want true, 10, 0", r.interrupted, r.sent, r.unsent)
	}
}
