// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/stats"
)

// Live is a run with no set length, for a worker whose driver decides when
// to look (gRPC's benchmark protocol, whose marks come when the driver
// wants): the window is the driver's marks. Its load runs until Stop, and
// Snapshot merges what its callers recorded so far. Each caller records
// into its own cell, with no lock.
type Live struct {
	target string
	f      *frame
	stop   context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu    sync.Mutex // serialises Snapshot, Stop and new cells; the callers never take it
	cells []*liveCell
	// sets are two generations of recorders (stats.Set, so that memory per
	// RPC in flight stays bounded): every cell records into one of
	// sets[cur] and keeps a spare of the other; a snapshot swaps them all.
	sets   [2]stats.Set
	cur    int
	spares []*stats.Recorder
	acc    *stats.Summary
	since  time.Time
}

// LiveSnapshot is what a Live run measured since its start or last reset.
type LiveSnapshot struct {
	*stats.Summary
	// Elapsed is the time since the start or the last reset.
	Elapsed time.Duration
	// Conns is the TCP connections the kernel held from this process to
	// the target at the snapshot (-1: could not be counted).
	Conns int
}

// StartLive opens step's layout to spec.Target, waits until it is ready
// (at most spec.DialTimeout), and starts the spec's ping under load until
// Stop or until ctx ends: a closed load's step.Inflight callers each keep
// one RPC in flight (unary or streaming); an open load (unary only) sends
// on its schedule whatever the replies, through the dispatcher, up to
// load.MaxOutstanding in flight, with latency counted from each intended
// send time, as a step on one machine does. spec.Warmup, AutoWarmup and
// Interval are not used; spec.Conns, RPCs and Inflight are replaced by step's.
func StartLive(ctx context.Context, spec *Spec, step Step, load Load, o Options) (*Live, error) {
	s := *spec
	s.Conns, s.RPCs, s.Inflight, s.Interval = []ConnMode{step.Conn}, []string{step.RPC}, []int{step.Inflight}, time.Second
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := load.validate(step); err != nil {
		return nil, err
	}
	f, cause, err := openFrame(ctx, &s, step, o)
	if err != nil {
		return nil, err
	}
	if cause != nil {
		return nil, cause
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l := &Live{target: s.Target, f: f, stop: stop, acc: stats.Merge(), since: time.Now()}
	go func() { // ctx ending stops the run as Stop does
		select {
		case <-ctx.Done():
		case <-runCtx.Done():
		}
		stop()
		f.cut() // calls under callContext end when their connections close
	}()
	w := PingWorkload(s.Service, step.RPC, s.PayloadBytes)
	if load.open() {
		l.startOpen(runCtx, &s, w, &load)
		return l, nil
	}
	var phase atomic.Int32
	phase.Store(phaseMeasure) // measured from the start; the driver's marks cut it
	closed := &closedRun{ctx: runCtx, calls: callContext(runCtx), phase: &phase, timeout: s.RPCTimeout}
	for i := range step.Inflight {
		c, rec, cc, p := w.NewCaller(), l.recorder(), f.conns[i%len(f.conns)], load.callerPacer(step.Inflight)
		l.wg.Go(func() { closed.loop(c, rec, cc, p, nil) })
	}
	return l, nil
}

// startOpen runs load's schedule of w on l's connections until ctx ends:
// the open loop's scheduler and dispatcher, with a window that never ends.
func (l *Live) startOpen(ctx context.Context, spec *Spec, w Workload, load *Load) {
	pacer, _ := NewPacer(load.Arrival, load.Rate, load.Seed+1) // checked by load.validate
	d := newDispatcher(ctx, l.f, spec, w, load.MaxOutstanding, l)
	clk, _, release := openClock(load.pacing())
	sched := &scheduler{pacer: pacer, clock: clk, end: forever, late: maxLate, conns: len(l.f.conns),
		hand: d.hand, handWait: d.handWait}
	l.wg.Go(func() {
		defer release()
		sched.run(ctx, clk.now())
		d.stop()
	})
}

// forever is the end of a Live run's schedule, which ctx ends first.
const forever = 100 * 365 * 24 * time.Hour

// recorder gives a new caller its cell (Live is a window).
func (l *Live) recorder() recorder {
	cell := &liveCell{}
	l.mu.Lock()
	cell.cur.Store(l.sets[l.cur].Recorder())
	l.cells = append(l.cells, cell)
	l.spares = append(l.spares, l.sets[1-l.cur].Recorder())
	l.mu.Unlock()
	return cell
}

// Snapshot merges what every caller recorded since the start or the last
// reset; with reset, the next snapshot counts from now.
func (l *Live) Snapshot(reset bool) LiveSnapshot {
	conns := -1
	if n, err := procstat.ConnsTo(0, HostPort(l.target)); err == nil {
		conns = n
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for i, c := range l.cells {
		l.spares[i] = c.swap(l.spares[i])
	}
	// Every cell now records into the other set: this one is quiet.
	addSummary(l.acc, l.sets[l.cur].Merge())
	l.sets[l.cur].Reset()
	l.cur = 1 - l.cur
	out := LiveSnapshot{Summary: stats.Merge(), Elapsed: now.Sub(l.since), Conns: conns}
	addSummary(out.Summary, l.acc)
	if reset {
		l.acc, l.since = stats.Merge(), now
	}
	return out
}

// Stop ends the run: it cancels what is in flight (not recorded), waits for
// every caller and closes the connections. It may be called more than once.
func (l *Live) Stop() {
	l.once.Do(func() {
		l.stop()
		l.f.cut()
		l.wg.Wait()
		l.f.close()
	})
}

// addSummary adds s into acc.
func addSummary(acc, s *stats.Summary) {
	acc.Hist = stats.MergeHistograms(acc.Hist, s.Hist)
	for i, n := range s.ByCode {
		acc.ByCode[i] += n
	}
	acc.Clamped += s.Clamped
}

// liveCell is one caller's recorder, swapped out by Snapshot without a
// lock: the caller raises busy around each Record, and Snapshot, having
// swapped in a fresh recorder, waits until busy is down, after which no
// Record can reach the old one (busy is raised before cur is loaded).
type liveCell struct {
	busy atomic.Int32
	cur  atomic.Pointer[stats.Recorder]
	_    [48]byte // keep neighbouring cells' counters off one cache line
}

// RecordErr records one call in the cell's current recorder.
func (c *liveCell) RecordErr(d time.Duration, code codes.Code, err error) {
	c.busy.Store(1)
	c.cur.Load().RecordErr(d, code, err)
	c.busy.Store(0)
}

// swap puts fresh in place and returns the recorder it replaced, once no
// Record is writing to it.
func (c *liveCell) swap(fresh *stats.Recorder) *stats.Recorder {
	old := c.cur.Swap(fresh)
	for c.busy.Load() != 0 {
		runtime.Gosched()
	}
	return old
}
