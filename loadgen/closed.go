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
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/stats"
)

// Options are the Go-only settings of a run (not echoed into records).
type Options struct {
	// DialOptions are added to every connection (default: plaintext).
	DialOptions []grpc.DialOption
	// ClientCPUs lists the CPUs the client is pinned to, for the record.
	ClientCPUs []int
}

// phases of a closed-loop step, read by every worker without a lock.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// RunStep runs one closed-loop step: it opens the step's connections, waits
// until they are ready (at most spec.DialTimeout), runs step.Inflight workers
// that each keep one RPC in flight for spec.Warmup then spec.Interval, and
// returns the record of the interval. If ctx ends during the interval the
// record covers what ran and has status "interrupted" (or "failed" with
// ctx's cause, see Sweep); if it ends earlier, RunStep returns ctx's error
// and no record.
func RunStep(ctx context.Context, spec *Spec, step Step, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	rec, _, err := runClosed(ctx, spec, step, Capped{}, o)
	return rec, err
}

// Capped is a closed-loop step for rpclab doctor, aimed at a user's
// service: step.Inflight workers each keep one call of Workload (the
// spec's ping when nil) in flight, and together never exceed MaxRPS.
type Capped struct {
	// Workload replaces the spec's ping when set (see CallWorkload).
	Workload Workload
	// MaxRPS caps the step's rate (0: no cap): each worker waits out its
	// share, MaxRPS/Inflight, between calls.
	MaxRPS float64
}

// RunCappedStep runs one closed-loop step under c's cap and returns its
// record (load_model "closed"), as RunStep.
func RunCappedStep(ctx context.Context, spec *Spec, step Step, c Capped, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if c.MaxRPS < 0 {
		return nil, usageErr(ErrMaxRPS, "negative rate %v", c.MaxRPS)
	}
	rec, _, err := runClosed(ctx, spec, step, c, o)
	return rec, err
}

// runClosed runs a closed-loop step (see RunStep); cause is the error of a
// failed set-up (nil otherwise).
func runClosed(ctx context.Context, spec *Spec, step Step, c Capped, o Options) (rec *result.Record, cause, err error) {
	f, cause, err := openFrame(ctx, spec, step, o)
	if f == nil || cause != nil {
		return recOf(f), cause, err
	}
	defer f.close()
	w := c.Workload
	if w == nil {
		w = PingWorkload(spec.Service, step.RPC, spec.PayloadBytes)
	}
	w.Describe(&f.rec.Spec)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	run := &closedRun{ctx: runCtx, calls: callContext(runCtx), phase: &phase, timeout: spec.RPCTimeout}
	if c.MaxRPS > 0 {
		run.gap = time.Duration(float64(step.Inflight) * 1e9 / c.MaxRPS)
	}
	recs := make([]*stats.Recorder, step.Inflight)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = stats.NewRecorder()
		cl, rec, cc := w.NewCaller(), recs[i], f.conns[i%len(f.conns)]
		wg.Go(func() { run.loop(cl, rec, cc) })
	}

	if !Sleep(ctx, spec.Warmup) {
		phase.Store(phaseDone)
		stop()
		f.cut()
		wg.Wait()
		return nil, nil, ctx.Err()
	}
	f.usage0 = f.readUsage(ctx)
	cpu0, _ := procstat.CPUTime(0)
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
	elapsed := time.Since(start)
	cpu1, _ := procstat.CPUTime(0)
	if f.usage0 != nil {
		// Read even when ctx ended (Ctrl-C), so an interrupted step keeps it.
		f.usage1 = f.readUsage(context.WithoutCancel(ctx))
	}
	stop()
	f.cut()
	wg.Wait()
	return f.finish(ctx, stats.Merge(recs...), elapsed, cpu1-cpu0, interrupted), nil, nil
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
// one call in flight, starting each at most every gap (0: at once), until
// the phase is done or ctx ends. Each call is made under calls
// (callContext of ctx): when ctx ends, the calls in flight end when their
// connections are closed. A call is recorded only if it both began and
// ended inside the measured interval and did not fail because the run
// itself was stopped.
type closedRun struct {
	ctx, calls context.Context
	phase      *atomic.Int32
	timeout    time.Duration // per call (0: none)
	gap        time.Duration
}

// loop runs one caller, c on cc, recording into rec.
func (r *closedRun) loop(c Caller, rec recorder, cc grpc.ClientConnInterface) {
	var t *time.Timer
	if r.gap > 0 {
		t = time.NewTimer(time.Hour)
		defer t.Stop()
	}
	next := time.Now()
	for {
		ph := r.phase.Load()
		if ph == phaseDone || r.ctx.Err() != nil {
			return
		}
		if r.gap > 0 {
			if w := time.Until(next); w > 0 {
				t.Reset(w)
				select {
				case <-t.C:
				case <-r.ctx.Done():
					return
				}
			}
			next = next.Add(r.gap)
		}
		if !r.once(c, rec, cc, ph) {
			return
		}
	}
}

// once makes one call of c on cc, begun in phase ph, and records it into
// rec if it also ended in the measured phase. It returns false if the
// call failed because the run ended. This is the whole per-call path of a
// closed-loop caller: it allocates nothing beyond what grpc-go's Invoke
// does (TestCallerAddsNoAllocations).
func (r *closedRun) once(c Caller, rec recorder, cc grpc.ClientConnInterface, ph int32) bool {
	t0 := time.Now()
	_, err := callBy(r.calls, c, cc, deadlineOf(t0, r.timeout))
	if err != nil && r.ctx.Err() != nil {
		return false
	}
	if ph == phaseMeasure && r.phase.Load() == phaseMeasure {
		rec.RecordErr(time.Since(t0), status.Code(err), err)
	}
	return true
}
