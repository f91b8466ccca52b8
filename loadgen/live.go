// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/stats"
)

// Live is a run with no set length, for a worker whose driver decides when
// to look (gRPC's benchmark protocol, whose marks come when the driver
// wants): its callers keep going until Stop, and Snapshot merges what they
// recorded so far. Each caller records into its own cell, with no lock.
type Live struct {
	target string
	f      *frame
	cells  []*liveCell
	stop   context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu     sync.Mutex // serialises Snapshot and Stop; the callers never take it
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
// (at most spec.DialTimeout), and starts step.Inflight callers that run
// until Stop or until ctx ends. With rate 0 each caller keeps one RPC in
// flight (a closed loop, unary or streaming); with rate > 0 (unary only)
// each caller sends at rate/step.Inflight per second, at times arrival
// (Poisson, as gRPC's own workers do, or Constant, each caller's schedule
// offset by its index/rate so the callers' sends interleave) gives: a reply
// later than the next send time delays that send, and latency counts from
// the intended send time, so a late send adds its lateness to the latency
// (coordinated-omission free, as the open loop measures). spec.Warmup and
// spec.Interval are not used; spec.Conns, RPCs and Inflight are replaced by
// step's.
func StartLive(ctx context.Context, spec *Spec, step Step, rate float64, arrival string, o Options) (*Live, error) {
	s := *spec
	s.Conns, s.RPCs, s.Inflight, s.Interval = []ConnMode{step.Conn}, []string{step.RPC}, []int{step.Inflight}, time.Second
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if rate < 0 || (rate > 0 && step.RPC != Unary) {
		return nil, usageErr(ErrRate, "%v RPCs per second for %s RPCs (a rate paces unary RPCs only)", rate, step.RPC)
	}
	if rate > 0 {
		if _, err := NewPacer(arrival, rate, 1); err != nil {
			return nil, err
		}
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
	var phase atomic.Int32
	phase.Store(phaseMeasure)
	closed := &closedRun{ctx: runCtx, calls: callContext(runCtx), phase: &phase, timeout: s.RPCTimeout}
	for i := 0; i < step.Inflight; i++ {
		cell := &liveCell{}
		cell.cur.Store(stats.NewRecorder())
		l.cells = append(l.cells, cell)
		l.spares = append(l.spares, stats.NewRecorder())
		c := w.NewCaller()
		cc := f.conns[i%len(f.conns)]
		if rate == 0 {
			l.wg.Go(func() { closed.loop(c, cell, cc) })
			continue
		}
		pacer, _ := NewPacer(arrival, rate/float64(step.Inflight), uint64(i)+1) // rate and arrival checked above
		var offset time.Duration
		if arrival != Poisson {
			offset = time.Duration(float64(i) / rate * float64(time.Second))
		}
		l.wg.Go(func() { paced(runCtx, c, cell, cc, pacer, time.Now().Add(offset), s.RPCTimeout) })
	}
	return l, nil
}

// Snapshot merges what every caller recorded since the start or the last
// reset; with reset, the next snapshot counts from now.
func (l *Live) Snapshot(reset bool) LiveSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	olds := make([]*stats.Recorder, len(l.cells))
	for i, c := range l.cells {
		olds[i] = c.swap(l.spares[i])
	}
	addSummary(l.acc, stats.Merge(olds...))
	for i, r := range olds {
		r.Reset()
		l.spares[i] = r
	}
	out := LiveSnapshot{Summary: stats.Merge(), Elapsed: now.Sub(l.since), Conns: -1}
	addSummary(out.Summary, l.acc)
	if n, err := procstat.ConnsTo(0, HostPort(l.target)); err == nil {
		out.Conns = n
	}
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
	acc.Hist.Merge(s.Hist)
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

// paced sends one RPC of c at each of p's times (counted from start), or
// as soon as the previous one ends if that is later, until ctx ends. Each
// latency counts from the intended send time, not from the actual send:
// a send delayed by a slow reply shows its delay in the latency. The calls
// are made under callContext(ctx), as the closed loop's: when ctx ends,
// those in flight end as the run closes cc (StartLive's f.cut).
func paced(ctx context.Context, c Caller, rec recorder, cc grpc.ClientConnInterface, p Pacer, start time.Time, timeout time.Duration) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	calls := callContext(ctx)
	for ctx.Err() == nil {
		due := start.Add(p.Next())
		if w := time.Until(due); w > 0 {
			t.Reset(w)
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
		_, err := callBy(calls, c, cc, deadlineOf(time.Now(), timeout))
		if err != nil && ctx.Err() != nil {
			return
		}
		rec.RecordErr(time.Since(due), status.Code(err), err)
	}
}
