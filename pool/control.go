// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/connectivity"
)

// MaxEvents bounds the adaptive pool's event history (Stats().Events): the
// oldest events are dropped first.
const MaxEvents = 256

// Event is one decision of an adaptive pool, with the signals it was
// taken on.
type Event struct {
	At       time.Time
	From, To int // the size before and after
	Action   Action
	Reason   Reason
	// The signals of the interval the decision was taken on: the RPCs in
	// flight at its end and their mean over it (Signals.MeanInFlight).
	InFlight     int64
	MeanInFlight float64
	MaxWriteWait time.Duration
	CPUBusy      float64 // negative: unknown
	Steal        float64 // the host's steal share (Signals.Steal); negative: unknown
	Throughput   float64 // RPCs completed per second
	// Backoff is the wait before the next growth after a failed trial
	// (zero after a trial that gained).
	Backoff time.Duration
	// Baseline and Tried are, on the decision that judged a trial, the
	// throughputs (RPC/s) it was judged on, measured side by side: with
	// the size before the trial (or the climb) and with the trial's
	// connection; zero on other decisions. BaseLatency and TriedLatency
	// are the mean times in flight of the RPCs completed on each side,
	// BaseCPU and TriedCPU the process's CPU time per RPC on each (zero
	// when unknown).
	Baseline, Tried           float64
	BaseLatency, TriedLatency time.Duration
	BaseCPU, TriedCPU         time.Duration
}

// control is an adaptive pool's control loop: it samples the signals once
// per Rule.Interval, calls Rule.Decide and applies its decision.
type control struct {
	rule Rule // its Min, Max and Interval bound and pace any Sizer
	// Only the loop's goroutine touches sizer, cpu, steal and last.
	sizer Sizer
	cpu   *cpuMeter
	steal *stealMeter
	last  time.Time // when the previous sample was taken

	mu     sync.Mutex // guards the history
	events []Event    // a ring of at most MaxEvents
	head   int        // index of the oldest event once the ring is full

	changing atomic.Bool   // the sizer was part-way through a change after the last decision (Pool.Settling)
	steps    atomic.Uint64 // decisions taken, for tests
	samplers atomic.Uint64 // reads the samplers took, for tests

	// The sampler of the interval under way (nil: none), what it read,
	// and whether, as the park guard, it ended a park early
	// (Signals.Unparked). reads is written by the sampler and read by the
	// loop once it has stopped.
	sampler    chan struct{} // closed to stop it
	samplerEnd chan struct{} // closed when it has stopped
	reads      inFlightReads
	unparked   atomic.Bool
}

func (p *Pool) startControl() {
	p.ctl = &control{rule: *p.cfg.adaptive, sizer: p.cfg.sizer, cpu: newCPUMeter(processCPU), steal: newStealMeter(p.cfg.steal), last: p.cfg.now()}
	if p.ctl.sizer == nil {
		p.ctl.sizer = &ruleSizer{r: *p.cfg.adaptive}
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
	case Grow:
		switch {
		case from >= ctl.rule.Max:
			d = Decision{Hold, ReasonAtMax}
		case p.grow():
			to++
		default:
			ctl.sizer.GrowFailed(now)
			d = Decision{Hold, ReasonGrowFailed}
		}
	case Shrink:
		if p.shrink() {
			to--
		}
	}
	active, limit := 0, int64(0)
	if a, ok := ctl.sizer.(activer); ok {
		active, limit = a.Active(), a.ParkLimit()
	}
	p.active.Store(int32(active))
	if active == 0 {
		limit = 0
	}
	p.startSampler(limit)
	if c, ok := ctl.sizer.(changer); ok {
		ctl.changing.Store(c.Changing())
	}
	if ctl.record(now, from, to, d, sig) && d.Action != Hold {
		p.cfg.logger.Info("pool: resized", "target", p.target, "from", from, "to", to, "reason", d.Reason.String())
	}
	ctl.steps.Add(1)
}

// Settling reports that an adaptive pool is part-way through a change of
// size as of its last decision (State.Changing): a trial under way, whose
// parked intervals run on fewer connections, or a climb still growing or
// giving back. A measurement of the pool waits until it is false, so that
// it measures the size the pool settled at (rpclab sweep does, for a
// pool:auto step past its warm-up). False for a fixed size, before the
// first decision, and for a Sizer (WithSizer) without a Changing method.
// It reads one atomic.
func (p *Pool) Settling() bool { return p.ctl != nil && p.ctl.changing.Load() }

// GuardChecks is how many times per Rule.Interval the pool reads the RPCs
// in flight (Signals.MeanInFlight), and the park guard checks them while a
// trial's connection is parked.
const GuardChecks = 20

// GuardReads is how many reads in a row the RPCs in flight must be past
// the park limit before the guard unparks: a backlog persists, while an
// open loop near a connection's capacity swings past twice its mean for
// a read now and then with no connection parked.
const GuardReads = 3

// inFlightReads is what the sampler read over one interval.
type inFlightReads struct {
	n         int   // reads
	sum, peak int64 // of the RPCs in flight
}

// startSampler reads the RPCs in flight GuardChecks times over the
// interval that starts now, for its mean and peak. With limit > 0 the
// interval runs with connections parked and the sampler is also the park
// guard: once the reads stay past limit for GuardReads reads (an open
// loop's offered load queueing on the base size), it gives every
// connection back to the pick at once and notes it for the next sample,
// instead of letting the queue grow until the interval ends. It reads
// atomics on a timer, off the RPC path.
func (p *Pool) startSampler(limit int64) {
	ctl := p.ctl
	stop, end := make(chan struct{}), make(chan struct{})
	ctl.sampler, ctl.samplerEnd = stop, end
	ctl.reads = inFlightReads{}
	t := time.NewTicker(ctl.rule.Interval / GuardChecks)
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
			ctl.samplers.Add(1)
			if limit == 0 {
				continue
			}
			if over = pastLimit(over, n, limit); over >= GuardReads {
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
func (p *Pool) sample(now time.Time) Signals {
	ctl := p.ctl
	slots := p.list()
	m := mono()
	sig := Signals{Interval: now.Sub(ctl.last), Conns: make([]ConnSignals, len(slots))}
	sig.CPUBusy, sig.CPU = ctl.cpu.sample()
	sig.Procs = runtime.GOMAXPROCS(0)
	sig.Steal = ctl.steal.sample()
	ctl.last = now
	for i, s := range slots {
		c := s.cur.Load()
		done, spent := c.completed.Load(), c.spent.Load()
		inflight := c.inflight.Load()
		sig.Conns[i] = ConnSignals{
			Ready:     c.cc.GetState() == connectivity.Ready,
			InFlight:  inflight,
			WriteWait: c.wm.sample(m, inflight == 0),
			Completed: done - c.lastCompleted,
			Spent:     time.Duration(spent - c.lastSpent),
		}
		c.lastCompleted, c.lastSpent = done, spent
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
	defer p.mu.Unlock()
	if p.closed.Load() {
		_ = c.close()
		return false
	}
	old := p.list()
	s := p.newSlot(c)
	next := append(old[:len(old):len(old)], s) // a new array: readers keep theirs
	p.slots.Store(&next)
	p.wg.Add(1)
	go p.watch(s, c)
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
	c.retire()
	return true
}

// record adds the decision to the history unless it holds for the same
// reason as the last recorded one; it reports whether it added it.
func (ctl *control) record(now time.Time, from, to int, d Decision, s Signals) bool {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	if n := len(ctl.events); d.Action == Hold && n > 0 {
		last := ctl.events[(ctl.head+n-1)%n]
		if last.Action == Hold && last.Reason == d.Reason {
			return false
		}
	}
	e := Event{
		At: now, From: from, To: to, Action: d.Action, Reason: d.Reason,
		InFlight: s.InFlight(), MeanInFlight: s.meanInFlight(), MaxWriteWait: s.MaxWriteWait(), CPUBusy: s.CPUBusy,
		Steal: s.Steal, Throughput: s.Throughput(),
	}
	if rs, ok := ctl.sizer.(*ruleSizer); ok {
		e.Backoff = rs.st.Backoff
		if rs.st.Judged {
			e.Baseline, e.Tried = rs.st.Baseline, rs.st.Tried
			e.BaseLatency, e.TriedLatency = rs.st.BaseLatency, rs.st.TriedLatency
			e.BaseCPU, e.TriedCPU = rs.st.BaseCPUPerRPC, rs.st.TriedCPUPerRPC
		}
	}
	if len(ctl.events) < MaxEvents {
		ctl.events = append(ctl.events, e)
	} else {
		ctl.events[ctl.head] = e
		ctl.head = (ctl.head + 1) % MaxEvents
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
