// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// Options are the Go-only settings of a run (not echoed into records).
type Options struct {
	// DialOptions are added to every connection (default: plaintext).
	DialOptions []grpc.DialOption
	// ClientCPUs lists the CPUs the client is pinned to, for the record.
	ClientCPUs []int
	// ServerCPUs lists the CPUs the server was pinned to, when it runs
	// on this host (lab's child server), for the record's host_cpu.
	ServerCPUs []int
	// AdaptiveRule, if set, sizes an AutoPool layout in place of
	// adaptive.DefaultRule (its Min and Max are replaced by the layout's);
	// nil: pool.WithAdaptive's DefaultRule.
	AdaptiveRule *adaptive.Rule
	// PoolEvents, if set, is called once for every step of an AutoPool
	// layout, as its pool closes, with the pool's decisions over the whole
	// step, warm-up included (rpclab sweep --pool-events). It is called
	// from the goroutine that runs the step.
	PoolEvents func(PoolHistory)
}

// PoolHistory is an adaptive pool's decisions over one step.
type PoolHistory struct {
	// Record is the step's record; its spec names the step.
	Record *result.Record
	// Opened is when the pool was opened; Measured when the interval
	// began (the record's started_at; zero if it never began).
	Opened, Measured time.Time
	// Events are pool.Stats().Events, oldest first.
	Events []pool.Event
}

// phases of a closed-loop step, read by every worker without a lock.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// RunStep runs one closed-loop step of the spec's ping: it opens the
// step's connections, waits until they are ready (at most
// spec.DialTimeout), runs step.Inflight callers that each keep one RPC in
// flight for the step's warm-up (spec.StepWarmup) then spec.Interval, and
// returns the record of the interval. If ctx ends during the interval the record covers what ran and
// has status "interrupted" (or "failed" with ctx's cause, see Sweep); if it
// ends earlier, RunStep returns ctx's error and no record.
func RunStep(ctx context.Context, spec *Spec, step Step, o Options) (*result.Record, error) {
	return RunLoad(ctx, spec, step, nil, Load{}, o)
}

// RunLoad runs one step of w (the spec's ping when nil) under load, over
// the fixed window of the step's warm-up (spec.StepWarmup) then
// spec.Interval, and returns its record, as RunStep: load_model "closed" (rpclab doctor's, under a
// MaxRPS cap) or "open" (see runOpen).
func RunLoad(ctx context.Context, spec *Spec, step Step, w Workload, load Load, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := load.validate(step); err != nil {
		return nil, err
	}
	var rec *result.Record
	var err error
	if load.open() {
		rec, _, err = runOpen(ctx, spec, step, w, &load, o)
	} else {
		rec, _, err = runClosed(ctx, spec, step, w, &load, o)
	}
	return rec, err
}

// runClosed runs a closed-loop step of w under load's cap (see RunStep);
// cause is the error of a failed set-up (nil otherwise).
func runClosed(ctx context.Context, spec *Spec, step Step, w Workload, load *Load, o Options) (rec *result.Record, cause, err error) {
	f, cause, err := openFrame(ctx, spec, step, o)
	if f == nil || cause != nil {
		return recOf(f), cause, err
	}
	defer f.close()
	w = workloadOf(w, spec, step.RPC)
	w.Describe(&f.rec.Spec)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	run := &closedRun{ctx: runCtx, calls: callContext(runCtx), phase: &phase, timeout: spec.RPCTimeout}
	win := &fixedWindow{}
	starts := make([]callStart, step.Inflight)
	var wg sync.WaitGroup
	for i := range step.Inflight {
		cl, rec, cc, p := w.NewCaller(), win.recorder(), f.conns[i%len(f.conns)], load.callerPacer(step.Inflight)
		wg.Go(func() { run.loop(cl, rec, cc, p, &starts[i]) })
	}

	if !f.warmUp(ctx, o) {
		phase.Store(phaseDone)
		stop()
		f.cut()
		wg.Wait()
		return nil, nil, ctx.Err()
	}
	f.usage0 = f.readUsage(ctx)
	cpu0, _ := procstat.CPUTime(0)
	f.host0 = readHost()
	start := time.Now()
	phase.Store(phaseMeasure)
	f.rec.StartedAt = start.UTC()

	// Count the connections the OS sees half-way through the interval.
	var interrupted bool
	if Sleep(ctx, spec.Interval/2) {
		if n, err := procstat.ConnsTo(0, HostPort(spec.Target)); err == nil {
			f.rec.ConnsObserved = n
		}
		interrupted = !Sleep(ctx, spec.Interval-time.Since(start))
	} else {
		interrupted = true
	}
	phase.Store(phaseDone)
	end := time.Now()
	elapsed := end.Sub(start)
	stuck, oldest := inFlight(end, each(starts))
	cpu1, _ := procstat.CPUTime(0)
	f.host1 = readHost()
	if f.usage0 != nil {
		// Read even when ctx ended (Ctrl-C), so an interrupted step keeps it.
		f.usage1 = f.readUsage(context.WithoutCancel(ctx))
	}
	stop()
	f.cut()
	wg.Wait()
	rec = f.finish(ctx, win.summary(), elapsed, cpu1-cpu0, interrupted)
	setInFlight(rec, stuck, oldest)
	return rec, nil, nil
}

// recOf is f's record (nil without a frame).
func recOf(f *frame) *result.Record {
	if f == nil {
		return nil
	}
	return f.rec
}

// callContext is the context a step's unary calls are made under: ctx's
// values without its cancellation or deadline. grpc-go derives a
// cancellable context from the one each call is given; from a cancellable
// parent shared by every worker, that registers the call with the parent
// and removes it again, under the parent's one mutex, twice per RPC on
// every worker (grpc-go's own benchmark client calls with
// context.Background(), which has none of this). A stop still ends the
// calls in flight at once: whoever cancels the run closes the step's
// connections right after (frame.cut), and a call on a closed connection
// ends with codes.Canceled.
func callContext(ctx context.Context) context.Context {
	return &uncancelled{ctx}
}

// uncancelled is context.WithoutCancel without its one allocation per
// RPC: WithoutCancel's context is a struct value that its Value method
// boxes into an interface on every lookup that reaches it, and grpc-go
// looks up a value on every call (TestCallerAddsNoAllocations). Unlike
// WithoutCancel's, its Value answers context's own key too, so
// context.Cause of it would be the run's cause; nothing asks (grpc-go asks
// the child it derives, which answers for itself).
type uncancelled struct{ parent context.Context }

func (*uncancelled) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*uncancelled) Done() <-chan struct{}       { return nil }
func (*uncancelled) Err() error                  { return nil }
func (c *uncancelled) Value(key any) any         { return c.parent.Value(key) }
func (c *uncancelled) String() string            { return "loadgen.callContext" }

// closedRun is what the callers of a closed-loop step share: each keeps
// one call in flight, until the phase is done or ctx ends. Each call is
// made under calls (callContext of ctx): when ctx ends, the calls in
// flight end when their connections are closed. A call is recorded only
// if it both began and ended inside the measured phase and did not fail
// because the run itself was stopped.
type closedRun struct {
	ctx, calls context.Context
	phase      *atomic.Int32
	timeout    time.Duration // per call (0: none)
}

// loop runs one caller, c on cc, recording into rec and publishing each
// call's start in slot (nil: nowhere); with a pacer (a capped load's)
// each call starts at most at the pacer's next time, on the same clock
// as the open loop's scheduler.
func (r *closedRun) loop(c Caller, rec recorder, cc grpc.ClientConnInterface, p Pacer, slot *callStart) {
	var clk clock
	if p != nil {
		var release func()
		clk, _, release = wallClock(TimerPacing)
		defer release()
	}
	start := time.Now()
	for {
		ph := r.phase.Load()
		if ph == phaseDone || r.ctx.Err() != nil {
			return
		}
		if p != nil {
			var due time.Time
			due, start = capDue(start, p.Next(), time.Now())
			if !clk.sleepUntil(r.ctx, due) {
				return
			}
		}
		if !r.once(c, rec, cc, ph, slot) {
			return
		}
	}
}

// capDue is when a capped caller's next call is due: at start plus the
// pacer's next offset, or now if that has passed, in which case the
// schedule's start moves by the lag. A cap never catches up: a caller held
// back (a slow reply, a paused server or machine) sends its next call at
// once and then keeps its gap, instead of sending the calls it missed in a
// burst above the cap.
func capDue(start time.Time, next time.Duration, now time.Time) (due, newStart time.Time) {
	due = start.Add(next)
	if lag := now.Sub(due); lag > 0 {
		return now, start.Add(lag)
	}
	return due, start
}

// once makes one call of c on cc, begun in phase ph, with its start
// published in slot while it runs, and records it into rec if it also
// ended in the measured phase. It returns false if the
// call failed because the run ended. This is the whole per-call path of a
// closed-loop caller: it allocates nothing beyond what grpc-go's Invoke
// does (TestCallerAddsNoAllocations).
func (r *closedRun) once(c Caller, rec recorder, cc grpc.ClientConnInterface, ph int32, slot *callStart) bool {
	t0 := time.Now()
	slot.begin(t0)
	_, err := callBy(r.calls, c, cc, deadlineOf(t0, r.timeout))
	slot.done()
	if err != nil && r.ctx.Err() != nil {
		return false
	}
	if ph == phaseMeasure && r.phase.Load() == phaseMeasure {
		rec.RecordErr(time.Since(t0), status.Code(err), err)
	}
	return true
}
