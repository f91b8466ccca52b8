// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/usage"
)

// DefaultMaxOutstanding bounds the RPCs an open-loop step keeps in flight
// unless told otherwise. Each concurrent RPC costs one goroutine and one
// latency histogram (about 220 KiB), made only when the schedule needs it.
const DefaultMaxOutstanding = 2000

// Pacing values of OpenLoop.Pacing (rpclab sweep --pacing).
const (
	TimerPacing   = "timer"
	PrecisePacing = "precise"
)

// OpenSpec is the open-loop part of a sweep: each step of the closed-loop
// Spec is run once per rate. Spec.Inflight is then the number of
// connections of a per-worker layout (it bounds nothing else).
type OpenSpec struct {
	// Rates are the offered loads in RPCs per second, swept ascending.
	Rates []float64
	// OpenLoop is how each step offers its rate.
	OpenLoop
	// Stop, if set, ends a layout's rates at the first record for which
	// it returns true (rpclab sweep --slo: the first rate that misses the
	// objective); nil: every rate runs.
	Stop func(*result.Record) bool
	// Workload, when set, is what every send calls (rpclab sweep --call:
	// CallWorkload); otherwise the sends are the spec's unary ping.
	// Server-streaming calls count one RPC per call, timed to the last
	// reply, and the record counts their messages.
	Workload Workload
}

// load is the step's load at rate.
func (o *OpenSpec) load(rate float64) Load { return Load{Rate: rate, OpenLoop: o.OpenLoop} }

// Validate checks o and returns a *usage.Error naming the flag at fault.
func (o *OpenSpec) Validate() error {
	if len(o.Rates) == 0 {
		return usage.Errorf(ErrRate, "no rate given")
	}
	for _, r := range o.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return usage.Errorf(ErrRate, "%v is not a positive number of RPCs per second", r)
		}
	}
	return o.OpenLoop.validate()
}

// SweepOpen runs every step of spec once per rate of open, rates ascending,
// and hands each record to sink as it is measured (as Sweep). With a Stop
// predicate, a layout's rates end at the first record it stops at; the
// records are judged afterwards (verdict.SLOResults).
func SweepOpen(ctx context.Context, spec *Spec, open OpenSpec, o Options, sink func(*result.Record) error, prog Progress) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if err := open.Validate(); err != nil {
		return err
	}
	for _, r := range spec.RPCs {
		if r != Unary {
			return usage.Errorf(ErrRPC, "the open loop sends unary RPCs only, got %q", r)
		}
	}
	rates := slices.Clone(open.Rates)
	slices.Sort(rates)
	steps := spec.Steps()
	n := len(steps) * len(rates)
	var failedSteps, i int
	for _, st := range steps {
		for _, rate := range rates {
			prog.Started(i, n, st)
			load := open.load(rate)
			rec, cause, err := runOpen(ctx, spec, st, open.Workload, &load, o)
			if err != nil {
				return stopped(ctx, err)
			}
			if err := sink(rec); err != nil {
				return err
			}
			if notMeasured(rec) {
				failedSteps++
			}
			prog.Ended(i, n, st, rec)
			i++
			if ctx.Err() != nil {
				return stopped(ctx, ctx.Err())
			}
			if cause != nil {
				return cause
			}
			if open.Stop != nil && open.Stop(rec) {
				break
			}
		}
	}
	if failedSteps > 0 {
		return fmt.Errorf("loadgen: %d of %d open-loop steps failed or stalled", failedSteps, n)
	}
	return nil
}

// RunOpenStep runs one open-loop step at rate RPCs per second and returns
// its record (see runOpen).
func RunOpenStep(ctx context.Context, spec *Spec, step Step, open OpenSpec, rate float64, o Options) (*result.Record, error) {
	if err := open.Validate(); err != nil {
		return nil, err
	}
	return RunLoad(ctx, spec, step, open.Workload, open.load(rate), o)
}

// MaxUnsentShare is the share of an open-loop step's scheduled sends that
// may go unmade (the client could not keep up) while the step stays "ok":
// above it the step is "overloaded". 1%: a client that keeps up misses at
// most the few sends due in the last moment of the interval.
const MaxUnsentShare = 0.01

// runOpen opens the step's layout, then sends w's calls (the spec's
// unary ping when nil) on load's schedule for the step's warm-up
// (spec.StepWarmup) then spec.Interval, whatever the replies. One scheduler goroutine hands each send to an
// idle caller goroutine, starting a new one when none is idle, up to
// MaxOutstanding; beyond that the send waits and the wait is counted. The
// step ends at the interval's end on the clock (up to maxLate after it
// while sends due in the interval are being made): sends due but not made
// by then are counted as unsent, and RPCs still in flight get the drain,
// then are cut off. Latency counts from the intended send time; the
// scheduler records the schedule lag (handed-off minus intended). Only
// sends intended inside the interval are recorded.
func runOpen(ctx context.Context, spec *Spec, step Step, w Workload, load *Load, o Options) (rec *result.Record, cause, err error) {
	pacer, err := NewPacer(load.Arrival, load.Rate, load.Seed+1)
	if err != nil {
		return nil, nil, err
	}
	f, cause, err := openFrame(ctx, spec, step, o)
	if f != nil {
		load.describe(f.rec)
	}
	if f == nil || cause != nil {
		return recOf(f), cause, err
	}
	defer f.close()

	w = workloadOf(w, spec, Unary)
	w.Describe(&f.rec.Spec)
	win := &fixedWindow{}
	warmup := spec.StepWarmup(step, o.AdaptiveRule)
	d := newDispatcher(ctx, f, spec, w, load.MaxOutstanding, win)
	defer d.cancel()
	clk, pacing, closeClock := openClock(load.pacing())
	defer closeClock()
	f.rec.Spec.Pacing = pacing
	sched := &scheduler{
		pacer: pacer, clock: clk,
		warmup: warmup, end: warmup + spec.Interval, late: maxLate, conns: len(f.conns),
		hand: d.hand, handWait: d.handWait,
	}
	var cpu0 time.Duration
	cpuTaken := false
	sched.onMeasure = func(at time.Time) {
		cpu0, _ = procstat.CPUTime(0)
		f.host0 = readHost()
		cpuTaken = true
		f.rec.StartedAt = at.UTC()
	}
	connsDone := make(chan int, 1)
	go func() {
		n := -1
		if Sleep(d.runCtx, warmup+spec.Interval/2) {
			if v, err := procstat.ConnsTo(0, HostPort(spec.Target)); err == nil {
				n = v
			}
		}
		connsDone <- n
	}()

	start := time.Now()
	sr := sched.run(ctx, start)
	elapsed := max(sr.stopped.Sub(start.Add(warmup)), 0)
	stuck, oldest := inFlight(time.Now(), d.starts()) // before the drain: what the interval left in flight
	cpu1, _ := procstat.CPUTime(0)
	f.host1 = readHost()
	if !d.drain(load.drain(spec)) {
		sr.interrupted = true
	}
	d.cancel()
	f.rec.ConnsObserved = <-connsDone

	rec = f.finish(ctx, win.summary(), elapsed, cpu1-cpu0, sr.interrupted)
	if !cpuTaken {
		rec.ClientCPUNS, rec.ClientCPUNSPerRPC = 0, 0
	}
	sr.fill(rec, d, countsReplies(w))
	setInFlight(rec, stuck, oldest)
	return rec, nil, nil
}

// openClock is the clock of the open loop's scheduler (wallClock; tests
// give a clock they step themselves).
var openClock = wallClock

// fill writes the open loop's counts into rec (the server-streaming
// calls' messages when streaming) and marks it overloaded when more than
// MaxUnsentShare of the interval's sends were not made.
func (r *scheduleResult) fill(rec *result.Record, d *dispatcher, streaming bool) {
	q := stats.Quantiles(stats.Merge(r.lag).Hist)
	rec.ScheduleLag = &q
	if h, err := stats.EncodeHistogram(stats.Merge(r.lag).Hist); err == nil {
		rec.ScheduleLagHDR = h
	}
	if streaming {
		var msgs int64
		for _, s := range d.senders {
			msgs += s.msgs
		}
		rec.Messages = &msgs
	}
	rec.MaxOutstandingHits = &r.hits
	rec.Sent = &r.sent
	rec.Unsent = &r.unsent
	peak := int64(len(d.senders))
	rec.PeakOutstanding = &peak
	// Overloaded says more than "no RPC completed" of a client so far
	// behind that none of its sends ended in time.
	overloaded := float64(r.unsent) > MaxUnsentShare*float64(r.sent+r.unsent)
	// A client that far behind also leaves RPCs in flight at the interval's
	// end; when the drain's cut-offs are the step's only failures, they are
	// the overload's doing, not the server's, and the step is overloaded.
	var cut int64
	for _, s := range d.senders {
		cut += s.cut
	}
	cutOnly := rec.Status == result.StatusFailed && cut > 0 && failures(rec) == cut
	if due := r.sent + r.unsent; overloaded && !r.interrupted && (rec.Status == result.StatusOK || rec.Requests == 0 || cutOnly) {
		rec.Status = result.StatusOverloaded
		rec.Error = fmt.Sprintf("%d of the %d sends due in the interval were not made by its end (more than %g%%): the client could not keep up",
			r.unsent, due, 100*MaxUnsentShare)
		if cutOnly {
			rec.Error += fmt.Sprintf("; %d RPCs still in flight when the drain ended were cut off (DeadlineExceeded)", cut)
		}
	}
}

// failures is how many of rec's RPCs failed.
func failures(rec *result.Record) int64 {
	var n int64
	for _, e := range rec.Errors {
		n += e
	}
	return n
}

// describe writes the open loop's settings into rec's spec.
func (l *Load) describe(rec *result.Record) {
	rec.Spec.LoadModel = "open"
	rec.Spec.RateRPS = l.Rate
	rec.Spec.Arrival = l.arrival()
	rec.Spec.Pacing = l.pacing()
	rec.Spec.MaxOutstanding = l.MaxOutstanding
}

// dispatcher hands the scheduler's sends to senders, goroutines that
// each make one call at a time, starting one when none is idle, up to
// max. Each sender owns its caller and records where its window says.
type dispatcher struct {
	// runCtx is parent until the drain ends it (cancel).
	runCtx, parent context.Context
	cancel         context.CancelFunc
	// calls is callContext(runCtx), the context of every send; cut ends
	// the sends in flight (frame.cut) after runCtx ended.
	calls   context.Context
	cut     func()
	conns   []grpc.ClientConnInterface
	work    Workload
	timeout time.Duration // per call (0: none)
	max     int
	jobs    chan job // unbuffered: a send succeeds only when a sender is idle
	wg      sync.WaitGroup
	senders []*sender
	win     window
	wait    *time.Timer
}

// sender is one of a dispatcher's goroutines: its caller, where it
// records, and what it counted.
type sender struct {
	c   Caller
	rec recorder
	// msgs counts the replies of measured calls (server-streaming calls
	// have any number); cut the measured calls the drain cut off.
	msgs, cut int64
	// start is when its call in flight was sent (see callStart).
	start callStart
}

func newDispatcher(parent context.Context, f *frame, spec *Spec, w Workload, max int, win window) *dispatcher {
	d := &dispatcher{parent: parent, conns: f.conns, cut: f.cut, work: w, timeout: spec.RPCTimeout, max: max, win: win,
		jobs: make(chan job), wait: time.NewTimer(time.Hour)}
	d.wait.Stop()
	d.runCtx, d.cancel = context.WithCancel(parent)
	d.calls = callContext(d.runCtx)
	return d
}

func (d *dispatcher) hand(j job) bool {
	select {
	case d.jobs <- j:
		return true
	default:
	}
	if len(d.senders) >= d.max {
		return false
	}
	d.spawn(j)
	return true
}

func (d *dispatcher) handWait(ctx context.Context, j job, by time.Time) bool {
	d.wait.Reset(time.Until(by))
	defer d.wait.Stop()
	select {
	case d.jobs <- j:
		return true
	case <-d.wait.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// spawn starts a sender with first as its first job.
func (d *dispatcher) spawn(first job) {
	s := &sender{c: d.work.NewCaller(), rec: d.win.recorder()}
	d.senders = append(d.senders, s)
	d.wg.Go(func() {
		d.send(s, first)
		for j := range d.jobs {
			d.send(s, j)
		}
	})
}

// drain ends the sends and waits up to max for the RPCs in flight; those
// still running then are cut off (and counted as DeadlineExceeded). It
// returns false if the run was stopped meanwhile (the RPCs in flight are
// then cut off too, and not counted).
func (d *dispatcher) drain(max time.Duration) bool {
	close(d.jobs)
	finished := make(chan struct{})
	go func() { d.wg.Wait(); close(finished) }()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-finished:
		return true
	case <-t.C:
		d.cancel()
		d.cut()
		<-finished
		return d.parent.Err() == nil
	case <-d.parent.Done():
		d.cut()
		<-finished
		return false
	}
}

// starts yields each sender's callStart; only the scheduler's goroutine,
// which starts senders, may call it.
func (d *dispatcher) starts() iter.Seq[*callStart] {
	return func(yield func(*callStart) bool) {
		for _, s := range d.senders {
			if !yield(&s.start) {
				return
			}
		}
	}
}

// stop ends a schedule that has no end (a Live run's, once ctx ended):
// the senders end as their calls do, cut by the run's stop.
func (d *dispatcher) stop() {
	close(d.jobs)
	d.cancel()
	d.cut()
	d.wg.Wait()
}

// errCutOff is the sample error of RPCs the drain cut off (see send).
var errCutOff = status.Error(codes.DeadlineExceeded, "still in flight when the step's drain ended")

// send makes j's call with s's caller under calls (callContext of runCtx,
// whose end, the drain's, cuts the RPCs in flight) and records it if
// measured. An RPC cut off by the drain counts as DeadlineExceeded; one
// cut off because parent (the run) was stopped is not recorded. Like the
// closed loop's once, it allocates nothing beyond grpc-go's Invoke
// (TestCallerAddsNoAllocations).
func (d *dispatcher) send(s *sender, j job) {
	s.start.begin(time.Now())
	n, err := callBy(d.calls, s.c, d.conns[j.conn], deadlineOf(j.intended, d.timeout))
	s.start.done()
	if !j.measured {
		return
	}
	lat := time.Since(j.intended)
	s.msgs += int64(n)
	code := status.Code(err)
	// parent first: its Done closes before runCtx, its child, is
	// cancelled, and the stop may cut the call in between.
	if err != nil && d.parent.Err() != nil {
		return
	}
	if err != nil && d.runCtx.Err() != nil {
		code, err = codes.DeadlineExceeded, errCutOff
		s.cut++
	}
	s.rec.RecordErr(lat, code, err)
}
