// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/stats"
)

// job is one scheduled send: when it was meant to go, on which connection,
// and whether it falls in the measured interval. Jobs travel by value.
type job struct {
	intended time.Time
	conn     int
	measured bool
}

// clock is what the open loop's scheduler reads and waits on. The real one
// is the wall clock with the step's pacing; tests give a fake one so the
// schedule runs in no wall time (as netem/clock.go and grpc-go's
// benchmark/latency).
type clock struct {
	now func() time.Time
	// sleepUntil returns at or after t, or false as soon as ctx ends.
	sleepUntil func(ctx context.Context, t time.Time) bool
}

// wallClock is the clock of a real step: Go's timers (TimerPacing), each
// wait also arming the kernel timer (PrecisePacing, see precisePacing). It
// returns the pacing that runs (TimerPacing where the kernel timer cannot
// be had) and what releases the clock.
func wallClock(pacing string) (clock, string, func()) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	wait := func(ctx context.Context, at time.Time) bool {
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return false
			}
		}
		return ctx.Err() == nil
	}
	if pacing == PrecisePacing {
		if precise, release, ok := precisePacing(wait); ok {
			return clock{now: time.Now, sleepUntil: precise}, PrecisePacing, release
		}
	}
	return clock{now: time.Now, sleepUntil: wait}, TimerPacing, func() {}
}

// scheduler runs an open loop's schedule: it takes each send's offset
// from the pacer, waits for it on its clock and hands the send on. The
// schedule ends at warmup+interval on the clock, or up to late after it
// while sends due in the interval are still being made: a send of the
// interval still unmade then (the client could not keep up) is counted as
// unsent; a warm-up send still unmade when the interval begins is dropped,
// so that a client behind in its warm-up starts the interval on time.
type scheduler struct {
	pacer       Pacer
	clock       clock
	warmup, end time.Duration // end: warmup + interval
	// late is how long past end the schedule may run to make sends
	// already due (see maxLate).
	late  time.Duration
	conns int // sends go to the connections in turn
	// hand gives j to an idle caller, or starts one, without waiting
	// (false: none is idle and no more may start).
	hand func(j job) bool
	// handWait gives j to the next caller to be idle, waiting until by at
	// most (false: by passed or ctx ended).
	handWait func(ctx context.Context, j job, by time.Time) bool
	// onMeasure is called at the first send of the interval (may be nil).
	onMeasure func(at time.Time)
}

// scheduleResult is what the scheduler counted; only sends intended in
// the interval count.
type scheduleResult struct {
	// sent were handed to a caller; unsent were due in the interval but
	// not made by its end; hits had to wait for a caller (MaxOutstanding).
	sent, unsent, hits int64
	// lag records how late each send was handed on (schedule lag).
	lag *stats.Recorder
	// stopped is when sending ended: the interval's end, the last late
	// send that caught up, the end of the allowance when sends were cut,
	// or when ctx ended (interrupted).
	stopped     time.Time
	interrupted bool
}

// run runs the schedule from start until its end or ctx's.
func (s *scheduler) run(ctx context.Context, start time.Time) scheduleResult {
	r := scheduleResult{lag: stats.NewRecorder()}
	measureAt, endAt := start.Add(s.warmup), start.Add(s.end)
	stopAt := endAt.Add(s.late)
	measuring := false
	next := 0
	// unsentFrom is the offset of the first send of the interval not made
	// (-1: none), counted once the schedule has stopped.
	unsentFrom := time.Duration(-1)
	var lastSent time.Time
	for {
		off := s.pacer.Next()
		if off >= s.end {
			break
		}
		at := start.Add(off)
		if !s.clock.sleepUntil(ctx, at) {
			r.interrupted = true
			break
		}
		measured := off >= s.warmup
		now := s.clock.now()
		if !now.Before(stopAt) {
			unsentFrom = off
			break
		}
		if !measured && !now.Before(measureAt) {
			continue // a warm-up send too late to matter: the interval starts on time
		}
		if measured && !measuring {
			measuring = true
			if s.onMeasure != nil {
				s.onMeasure(at)
			}
		}
		j := job{intended: at, conn: next, measured: measured}
		next = (next + 1) % s.conns
		if !s.hand(j) {
			by := measureAt
			if measured {
				r.hits++
				by = stopAt
			}
			if !s.handWait(ctx, j, by) {
				if ctx.Err() != nil {
					r.interrupted = true
					break
				}
				if !measured {
					continue // no caller came free before the interval
				}
				unsentFrom = off
				break
			}
		}
		if measured {
			lastSent = s.clock.now()
			r.sent++
			r.lag.Record(lastSent.Sub(at), codes.OK)
		}
	}
	s.finish(ctx, &r, endAt, stopAt, unsentFrom, lastSent)
	return r
}

// finish waits on the clock for the interval's end (the interval ends
// there, not at the last send), then sets when the schedule stopped and,
// when it was cut at the send at unsentFrom (-1: it was not), how many
// sends of the interval it did not make.
func (s *scheduler) finish(ctx context.Context, r *scheduleResult, endAt, stopAt time.Time, unsentFrom time.Duration, lastSent time.Time) {
	if !r.interrupted && !s.clock.sleepUntil(ctx, endAt) {
		r.interrupted = true
	}
	switch {
	case r.interrupted:
		r.stopped = s.clock.now()
	case unsentFrom >= 0:
		r.stopped = stopAt // cut: it was sending until then
	default:
		// The end of the interval, or of the late sends that caught up;
		// not the moment this goroutine woke after it.
		r.stopped = endAt
		if lastSent.After(endAt) {
			r.stopped = lastSent
		}
	}
	if unsentFrom >= 0 {
		r.unsent = s.unsent(unsentFrom)
	}
}

// maxLate is how long past its interval an open-loop step may keep making
// sends that were due in it. A client that falls behind for a moment (a
// pause of the machine, a collection) catches up and loses nothing; one
// that cannot keep up ends there and counts what it did not send. 200 ms:
// on this project's 2-core machine shared with other work, under -race,
// the scheduler was seen paused for up to about 150 ms.
const maxLate = 200 * time.Millisecond

// maxCounted bounds how many of the pacer's remaining sends unsent counts
// one by one; past it the rest are estimated from the rate (at 10 million
// a second, one second of schedule).
const maxCounted = 10_000_000

// unsent counts the sends of the interval from the one at off (not made)
// to the end of the schedule.
func (s *scheduler) unsent(off time.Duration) int64 {
	var n int64
	if off >= s.warmup {
		n = 1
	}
	for i := 0; i < maxCounted; i++ {
		o := s.pacer.Next()
		if o >= s.end {
			return n
		}
		if o >= s.warmup {
			n++
		}
		off = o
	}
	return n + int64((s.end-max(off, s.warmup)).Seconds()*s.pacer.Rate())
}
