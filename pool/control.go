// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/connectivity"

	"github.com/rpclab/rpclab/pool/internal/adapt"
)

// maxEvents bounds the adaptive pool's history (Stats().Events): the
// oldest events are dropped first.
const maxEvents = 256

// samplesPerInterval is how many times per interval the pool reads the
// RPCs in flight (their mean and peak), and the park guard checks them
// while a trial's connection is parked.
const samplesPerInterval = 20

// guardReads is how many reads in a row the RPCs in flight must be past
// the park limit before the guard unparks: a backlog persists, while an
// open loop near a connection's capacity swings past it now and then.
const guardReads = 3

// control is an adaptive pool's control loop: once per interval it
// samples the signals, asks the sizer and applies its decision.
type control struct {
	rule adapt.Rule // its Min, Max and Interval bound and pace any sizer
	// Only the loop's goroutine touches sizer, steal and last.
	sizer adapt.Sizer
	steal *stealMeter
	last  time.Time // when the previous sample was taken

	mu     sync.Mutex // guards the history
	events []Event    // a ring of at most maxEvents
	head   int        // index of the oldest event once the ring is full

	changing atomic.Bool   // the sizer was part-way through a change after the last decision
	steps    atomic.Uint64 // decisions taken, for tests
	samples  atomic.Uint64 // reads the sampler took, for tests

	// The sampler of the interval under way (nil: none) and what it read;
	// reads is written by the sampler and read by the loop once it has
	// stopped. unparked: the guard ended a park early.
	sampler    chan struct{} // closed to stop it
	samplerEnd chan struct{} // closed when it has stopped
	reads      inFlightReads
	unparked   atomic.Bool
}

func (p *Pool) startControl() {
	p.ctl = &control{rule: p.cfg.rule, sizer: p.cfg.sizer, steal: newStealMeter(p.cfg.steal), last: p.cfg.now()}
	if p.ctl.sizer == nil {
		p.ctl.sizer = &adapt.RuleSizer{R: p.cfg.rule}
	}
	tick, stop := p.cfg.newTicker(p.ctl.rule.Interval)
	p.wg.Add(1)
	go p.control(tick, stop)
}

// control runs the loop until the pool closes.
func (p *Pool) control(tick <-chan time.Time, stop func()) {
	defer p.wg.Done()
	defer stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-tick:
			p.step()
		}
	}
}

// step takes one decision and applies it.
func (p *Pool) step() {
	ctl := p.ctl
	reads := ctl.stopSampler()
	now := p.cfg.now()
	sig := p.sample(now)
	sig.Unparked = ctl.unparked.Swap(false)
	if reads.n > 0 {
		sig.Reads, sig.MeanInFlight, sig.PeakInFlight = reads.n, float64(reads.sum)/float64(reads.n), reads.peak
	}
	d := ctl.sizer.Size(now, sig)
	from := len(sig.Conns)
	to := from
	switch d.Action {
	case adapt.Grow:
		switch {
		case from >= ctl.rule.Max:
			d = adapt.Decision{Action: adapt.Hold, Reason: adapt.ReasonAtMax}
		case p.grow():
			to++
		default:
			ctl.sizer.GrowFailed(now)
			d = adapt.Decision{Action: adapt.Hold, Reason: adapt.ReasonGrowFailed}
		}
	case adapt.Shrink:
		if p.shrink() {
			to--
		}
	}
	active, limit := 0, int64(0)
	if a, ok := ctl.sizer.(adapt.Parker); ok {
		active, limit = a.Active(), a.ParkLimit()
	}
	p.active.Store(int32(active))
	if active == 0 {
		limit = 0
	}
	p.startSampler(limit)
	if c, ok := ctl.sizer.(adapt.Changer); ok {
		ctl.changing.Store(c.Changing())
	}
	if ctl.record(now, from, to, d, sig) && to != from {
		p.cfg.logger.Info("pool: resized", "target", p.target, "from", from, "to", to, "reason", d.Reason)
	}
	ctl.steps.Add(1)
}

// Settling reports that an adaptive pool is part-way through a change of
// size as of its last decision: a trial under way, whose parked intervals
// run on fewer connections. A measurement of the pool waits until it is
// false, so that it measures the size the pool settled at. False for a
// fixed size and before the first decision. It reads one atomic.
func (p *Pool) Settling() bool { return p.ctl != nil && p.ctl.changing.Load() }

// inFlightReads is what the sampler read over one interval.
type inFlightReads struct {
	n         int   // reads
	sum, peak int64 // of the RPCs in flight
}

// startSampler reads the RPCs in flight samplesPerInterval times over the
// interval that starts now, for their mean and peak. With limit > 0 the
// interval runs with connections parked and the sampler is also the park
// guard: once the reads stay past limit for guardReads reads in a row (an
// open loop's load queueing on the base size), it gives every connection
// back to the pick at once, instead of letting the queue grow until the
// interval ends. It reads atomics on a timer, off the RPC path.
func (p *Pool) startSampler(limit int64) {
	ctl := p.ctl
	stop, end := make(chan struct{}), make(chan struct{})
	ctl.sampler, ctl.samplerEnd = stop, end
	ctl.reads = inFlightReads{}
	t := time.NewTicker(ctl.rule.Interval / samplesPerInterval)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(end)
		defer t.Stop()
		over := 0
		for {
			select {
			case <-stop:
				return
			case <-p.ctx.Done():
				return
			case <-t.C:
			}
			var n int64
			for _, s := range p.list() {
				n += s.cur.Load().inflight.Load()
			}
			r := &ctl.reads
			r.n, r.sum, r.peak = r.n+1, r.sum+n, max(r.peak, n)
			ctl.samples.Add(1)
			if limit == 0 {
				continue
			}
			if over = pastLimit(over, n, limit); over >= guardReads {
				p.active.Store(0)
				ctl.unparked.Store(true)
				limit = 0 // unparked: go on reading
			}
		}
	}()
}

// pastLimit is the park guard's count of reads in a row past limit after
// reading n RPCs in flight, from over before it.
func pastLimit(over int, n, limit int64) int {
	if n <= limit {
		return 0
	}
	return over + 1
}

// stopSampler stops the sampler, if one runs, waits for it and returns
// what it read.
func (ctl *control) stopSampler() inFlightReads {
	if ctl.sampler == nil {
		return inFlightReads{}
	}
	close(ctl.sampler)
	<-ctl.samplerEnd
	ctl.sampler, ctl.samplerEnd = nil, nil
	return ctl.reads
}

// sample reads the signals of the interval ending now.
func (p *Pool) sample(now time.Time) adapt.Signals {
	ctl := p.ctl
	slots := p.list()
	m := mono()
	sig := adapt.Signals{Interval: now.Sub(ctl.last), Conns: make([]adapt.ConnSignals, len(slots))}
	sig.Steal = ctl.steal.sample()
	ctl.last = now
	for i, s := range slots {
		c := s.cur.Load()
		done := c.completed.Load()
		inflight := c.inflight.Load()
		sig.Conns[i] = adapt.ConnSignals{
			Ready:     c.cc.GetState() == connectivity.Ready,
			InFlight:  inflight,
			WriteWait: c.wm.sample(m, inflight == 0),
			Completed: done - c.lastCompleted,
		}
		c.lastCompleted = done
	}
	return sig
}

// grow dials one more connection and, once it is READY, adds it to the
// slots the pick reads. It reports false, leaving the pool as it was, if
// the connection is not READY within the re-dial delay (WithRedialAfter)
// or the pool closes meanwhile.
func (p *Pool) grow() bool {
	c, err := p.dial()
	if err != nil {
		p.cfg.logger.Warn("pool: grow", "target", p.target, "err", err)
		return false
	}
	c.cc.Connect()
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.redialAfter)
	defer cancel()
	for st := c.cc.GetState(); st != connectivity.Ready; st = c.cc.GetState() {
		if st == connectivity.Idle {
			c.cc.Connect()
		}
		if !c.cc.WaitForStateChange(ctx, st) {
			_ = c.close()
			return false
		}
	}
	c.state.Store(int32(connectivity.Ready))
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		_ = c.close()
		return false
	}
	old := p.list()
	s := p.newSlotID(c, freeID(old, 0))
	next := append(old[:len(old):len(old)], s) // a new array: readers keep theirs
	p.slots.Store(&next)
	p.wg.Add(1)
	go p.watch(s, c)
	p.mu.Unlock()
	p.met.resized(+1)
	return true
}

// shrink drops the newest slot: no new RPC picks it, its watcher stops,
// and its connection closes when its last RPC ends. It reports false at
// the min or after Close.
func (p *Pool) shrink() bool {
	p.mu.Lock()
	old := p.list()
	if len(old) <= p.ctl.rule.Min || p.closed.Load() {
		p.mu.Unlock()
		return false
	}
	s := old[len(old)-1]
	next := old[: len(old)-1 : len(old)-1]
	p.slots.Store(&next)
	c := s.cur.Load()
	p.retired[c] = struct{}{}
	s.cancel()
	p.mu.Unlock()
	p.met.resized(-1)
	c.retire()
	return true
}

// record adds the decision to the history unless it holds for the same
// reason as the last recorded one; it reports whether it added it.
func (ctl *control) record(now time.Time, from, to int, d adapt.Decision, s adapt.Signals) bool {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	if n := len(ctl.events); from == to && n > 0 {
		last := ctl.events[(ctl.head+n-1)%n]
		if last.From == last.To && last.Reason == d.Reason {
			return false
		}
	}
	e := Event{
		At: now, From: from, To: to, Reason: d.Reason,
		MeanInFlight: s.Mean(), WriteWait: s.MaxWriteWait(), Throughput: s.Throughput(),
	}
	if j, ok := ctl.sizer.(adapt.Judger); ok {
		e.Backoff = j.Backoff()
		e.With, e.Without, _ = j.Judged()
	}
	if len(ctl.events) < maxEvents {
		ctl.events = append(ctl.events, e)
	} else {
		ctl.events[ctl.head] = e
		ctl.head = (ctl.head + 1) % maxEvents
	}
	return true
}

// history copies the events, oldest first.
func (ctl *control) history() []Event {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	out := make([]Event, 0, len(ctl.events))
	out = append(out, ctl.events[ctl.head:]...)
	return append(out, ctl.events[:ctl.head]...)
}
