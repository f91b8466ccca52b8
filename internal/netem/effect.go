// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"math/rand/v2"
	"time"
)

// An Effect is one property of a link. Schedule is told that n bytes reach
// the effect at t and returns when they leave it. A link calls Schedule in
// the order the bytes were written, from one goroutine at a time, so an
// effect may keep state (the time its queue drains). Effects are pure
// functions of their inputs and state: they never read the clock or sleep,
// which is what lets tests check them without waiting.
type Effect interface {
	Schedule(t time.Time, n int) time.Time
}

// Delay adds a fixed latency.
type Delay time.Duration

var _ Effect = Delay(0)

// Schedule returns t plus the delay.
func (d Delay) Schedule(t time.Time, _ int) time.Time { return t.Add(time.Duration(d)) }

// Rate serializes bytes at a fixed bandwidth: a chunk starts when both it
// and the line are free, and takes n*8/bps to pass.
type Rate struct {
	bps  int64
	free time.Time // when the line finishes the bytes queued so far
}

var _ Effect = (*Rate)(nil)

// NewRate returns a Rate of bps bits per second (bps > 0).
func NewRate(bps int64) *Rate { return &Rate{bps: bps} }

// Schedule returns when the last of the n bytes has passed the line.
func (r *Rate) Schedule(t time.Time, n int) time.Time {
	start := t
	if r.free.After(start) {
		start = r.free
	}
	r.free = start.Add(TransmitTime(n, r.bps))
	return r.free
}

// TransmitTime is how long n bytes take at bps bits per second.
func TransmitTime(n int, bps int64) time.Duration {
	if bps <= 0 {
		return 0
	}
	// n*8*1e9 overflows int64 above ~1.1 GB; split seconds and remainder.
	bits := int64(n) * 8
	sec := bits / bps
	rem := bits % bps
	return time.Duration(sec)*time.Second + time.Duration(rem*int64(time.Second)/bps)
}

// Jitter moves each chunk by a uniform amount within ±Max. The link keeps
// chunks in order and never delivers one before it was written, whatever
// Jitter returns.
type Jitter struct {
	Max time.Duration
	rnd *rand.Rand
}

var _ Effect = (*Jitter)(nil)

// NewJitter returns a Jitter drawing from rnd.
func NewJitter(max time.Duration, rnd *rand.Rand) *Jitter { return &Jitter{Max: max, rnd: rnd} }

// Schedule returns t moved by a uniform draw in [-Max, +Max].
func (j *Jitter) Schedule(t time.Time, _ int) time.Time {
	if j.Max <= 0 {
		return t
	}
	return t.Add(time.Duration(j.rnd.Int64N(2*int64(j.Max)+1)) - j.Max)
}

// schedule runs a chunk of n bytes written at t through effects and applies
// the link's two rules: no delivery before the write, no overtaking the
// chunk before (last).
func schedule(effects []Effect, t, last time.Time, n int) time.Time {
	at := t
	for _, e := range effects {
		at = e.Schedule(at, n)
	}
	if at.Before(t) {
		at = t
	}
	if at.Before(last) {
		at = last
	}
	return at
}
