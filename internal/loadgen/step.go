// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/proto/usagepb"
)

// frame is what every step shares, whatever decides when its RPCs happen
// (the closed loop, the closed loop over any method, the open loop): its
// record and its connection layout, opened and ready.
type frame struct {
	spec  *Spec
	step  Step
	rec   *result.Record
	pools []*pool.Pool
	// conns are the pools as the callers use them; worker i of a closed
	// loop uses conns[i%len(conns)].
	conns []grpc.ClientConnInterface
	// usage0 and usage1 are the server's CPU time read at the interval's
	// start and end (nil when the server did not answer).
	usage0, usage1 *usagepb.UsageResponse
	// host0 and host1 are the host's CPU times read beside the client's
	// CPU time at the interval's start and end (nil when not read).
	host0, host1 *procstat.CPUStat
	// serverCPUs are the CPUs the server was pinned to (Options).
	serverCPUs []int
	// onPool is Options.PoolEvents; opened is when the layout was opened.
	onPool func(PoolHistory)
	opened time.Time
}

// openFrame makes the step's record and opens its layout, waiting until
// every connection is ready (at most spec.DialTimeout). If that fails, the
// frame's record is failed and cause says why (it wraps ErrUnreachable
// when the target could not be reached); the frame is then closed. err is
// ctx's error when ctx ended first; there is no frame then.
func openFrame(ctx context.Context, spec *Spec, step Step, o Options) (f *frame, cause, err error) {
	f = &frame{spec: spec, step: step, rec: NewRecord(spec, step, o), serverCPUs: o.ServerCPUs, onPool: o.PoolEvents, opened: time.Now()}
	if cause := checkFDs(step.Conn.Conns(step.Inflight)); cause != nil {
		return f.fail(cause), cause, nil
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, o.DialOptions...)
	f.pools, err = openLayout(spec.Target, step, o.AdaptiveRule, dial)
	if err != nil {
		return f.fail(err), err, nil
	}
	if err := f.connect(ctx, dial); err != nil {
		f.close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return f.fail(err), err, nil
	}
	f.conns = make([]grpc.ClientConnInterface, len(f.pools))
	for i, p := range f.pools {
		f.conns[i] = p
	}
	return f, nil, nil
}

// connect waits for every connection of the layout. Beside it, one probe
// connection watches for a failure whose cause is known (refused, no such
// host, not a gRPC or not a TLS server): it ends the wait at once and is
// returned, where the layout alone would wait out the dial timeout.
func (f *frame) connect(ctx context.Context, dial []grpc.DialOption) error {
	dctx, cancel := context.WithTimeout(ctx, f.spec.DialTimeout)
	defer cancel()
	probed := make(chan error, 1)
	go func() {
		err := probe(dctx, f.spec.Target, dial)
		if err != nil && dctx.Err() == nil {
			cancel()
		}
		probed <- err
	}()
	var err error
	for _, p := range f.pools {
		if err = p.Connect(dctx); err != nil {
			break
		}
	}
	cancel()
	perr := <-probed
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case perr != nil && !errors.Is(perr, context.DeadlineExceeded) && !errors.Is(perr, context.Canceled):
		return perr
	}
	return fmt.Errorf("%w: no connection to %s within %v: %v", ErrUnreachable, f.spec.Target, f.spec.DialTimeout, err)
}

// autoPool is the adaptive pool of an AutoPool step (nil for any other
// layout, or before it opened).
func (f *frame) autoPool() *pool.Pool {
	if f.step.Conn.Kind != AutoPool || len(f.pools) != 1 {
		return nil
	}
	return f.pools[0]
}

func (f *frame) close() {
	if p, on := f.autoPool(), f.onPool; p != nil && on != nil {
		f.onPool = nil // once: cut closes the frame a second time
		on(PoolHistory{Record: f.rec, Opened: f.opened, Measured: f.rec.StartedAt, Events: p.Stats().Events})
	}
	for _, p := range f.pools {
		_ = p.Close()
	}
}

// cut ends the calls in flight on the frame's connections at once by
// closing them without a drain (a Shutdown whose context is already done:
// they end with codes.Canceled): the stop of a step whose calls are made
// under callContext, called after the run's context is cancelled, so the
// callers see the run ended and do not count these calls. The frame is
// closed afterwards; a second close is harmless.
func (f *frame) cut() {
	now, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range f.pools {
		_ = p.Shutdown(now)
	}
	f.close()
}

// fail marks the frame's record failed with err.
func (f *frame) fail(err error) *frame {
	failed(f.rec, err)
	return f
}

// finish fills the record from what the callers measured over elapsed,
// with cpu the client's CPU time meanwhile (and the server's, when the
// frame read it), and sets its status: failed
// when no RPC succeeded or more than MaxErrorShare failed; when the step
// was cut short, interrupted, or failed with the cause ctx was cancelled
// with (see Sweep).
func (f *frame) finish(ctx context.Context, sum *stats.Summary, elapsed, cpu time.Duration, interrupted bool) *result.Record {
	rec := f.rec
	fill(rec, sum, elapsed, cpu)
	rec.ServerCPU = f.serverCPU(elapsed, rec.Requests)
	rec.HostCPU = HostCPU(f.host0, f.host1, rec.Env.ClientCPUs, f.serverCPUs)
	if p := f.autoPool(); p != nil {
		end := time.Now()
		rec.PoolSizes = PoolSizes(p.Stats().Events, f.step.Conn.Min, end.Add(-elapsed), end)
	}
	if nerr := rec.Requests - sum.OK(); rec.Status == result.StatusOK && float64(nerr) > MaxErrorShare*float64(rec.Requests) {
		rec.Status = result.StatusFailed
		rec.Error = fmt.Sprintf("%d of %d RPCs failed (%.1f%%, more than the %g%% a step may lose): %s%s",
			nerr, rec.Requests, 100*float64(nerr)/float64(rec.Requests), 100*MaxErrorShare, errorCounts(rec.Errors), sampleSuffix(rec))
	}
	if interrupted {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
			rec.Status = result.StatusFailed
			rec.Error = "stopped: " + cause.Error()
		} else {
			rec.Status = result.StatusInterrupted
			rec.Error = "the interval was cut short"
		}
	}
	return rec
}

// warmUp runs the step's warm-up (Spec.StepWarmup). An AutoPool step
// whose warm-up its rule sets (Spec.AutoWarmup zero) then waits on while
// its pool is part-way through a change of size (pool.Pool.Settling), at
// most the rule's adaptive.Rule.SettleWait: a trial under way when the warm-up ends
// would put its parked intervals, on fewer connections, into the
// measured one. The record's warm-up is the time it took. warmUp reports
// false if ctx ended first.
func (f *frame) warmUp(ctx context.Context, o Options) bool {
	if !Sleep(ctx, f.spec.StepWarmup(f.step, o.AdaptiveRule)) {
		return false
	}
	p := f.autoPool()
	if p == nil || f.spec.AutoWarmup > 0 {
		return true
	}
	rule := autoRule(f.step.Conn, o.AdaptiveRule)
	waited, ok := waitSettled(ctx, p.Settling, max(rule.Interval/10, time.Millisecond), rule.SettleWait())
	f.rec.Spec.WarmupNS += int64(waited)
	return ok
}

// waitSettled waits while settling reports true, checking every poll,
// for at most limit; it returns how long it waited, and false if ctx
// ended first.
func waitSettled(ctx context.Context, settling func() bool, poll, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	if !settling() {
		return 0, ctx.Err() == nil
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-t.C:
		}
		if waited := time.Since(start); !settling() || waited >= limit {
			return waited, true
		}
	}
}

// Sleep waits d or until ctx ends; it returns false if ctx ended first
// (and at once, without waiting, when d <= 0 and ctx has ended).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
