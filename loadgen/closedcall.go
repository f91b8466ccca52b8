// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/anycall"
	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/stats"
)

// Capped is a closed-loop step for rpclab doctor, aimed at a user's
// service: step.Inflight workers each keep one call of Call (the ping when
// nil) in flight, and together never exceed MaxRPS.
type Capped struct {
	// Call and Request replace the ping when set (see OpenSpec.Call).
	Call    *anycall.Method
	Request proto.Message
	// MaxRPS caps the step's rate (0: no cap): each worker waits out its
	// share, MaxRPS/Inflight, between calls.
	MaxRPS float64
}

// RunCappedStep runs one closed-loop step under c's cap and returns its
// record (load_model "closed"). If ctx ends during the interval the record
// has status "interrupted"; if earlier, ctx's error and no record.
func RunCappedStep(ctx context.Context, spec *Spec, step Step, c Capped, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if c.MaxRPS < 0 {
		return nil, usageErr("--max-rps", "negative rate %v", c.MaxRPS)
	}
	if c.Call == nil && c.MaxRPS == 0 {
		rec, _, err := runStep(ctx, spec, step, o)
		return rec, err
	}
	rec := newRecord(spec, step, o)
	if c.Call != nil {
		rec.Spec.Call = strings.TrimPrefix(c.Call.Path, "/")
	}
	pools, err := openLayout(spec.Target, step, o)
	if err != nil {
		return failed(rec, err), nil
	}
	defer func() {
		for _, p := range pools {
			_ = p.Close()
		}
	}()
	dctx, cancel := context.WithTimeout(ctx, spec.DialTimeout)
	for _, p := range pools {
		if err = p.Connect(dctx); err != nil {
			break
		}
	}
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failed(rec, fmt.Errorf("%w: no connection to %s within %v: %v", ErrUnreachable, spec.Target, spec.DialTimeout, err)), nil
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	recs := make([]*stats.Recorder, step.Inflight)
	body := make([]byte, spec.PayloadBytes)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = stats.NewRecorder()
		cl := &caller{conns: nil, rec: recs[i], timeout: spec.RPCTimeout, call: c.Call, callReq: c.Request}
		cl.req = pingRequest(spec.PayloadBytes, body)
		if c.Call != nil {
			cl.callResp = c.Call.NewResponse()
		}
		cc := pools[i%len(pools)]
		var gap time.Duration
		if c.MaxRPS > 0 {
			gap = time.Duration(float64(step.Inflight) * 1e9 / c.MaxRPS)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now()
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			for {
				ph := phase.Load()
				if ph == phaseDone || runCtx.Err() != nil {
					return
				}
				if gap > 0 {
					if w := time.Until(next); w > 0 {
						t.Reset(w)
						select {
						case <-t.C:
						case <-runCtx.Done():
							return
						}
					}
					next = next.Add(gap)
				}
				t0 := time.Now()
				var err error
				if cl.timeout > 0 {
					cctx, cancel := context.WithTimeout(runCtx, cl.timeout)
					err = cl.invoke(cctx, cc)
					cancel()
				} else {
					err = cl.invoke(runCtx, cc)
				}
				if err != nil && runCtx.Err() != nil {
					return
				}
				if ph == phaseMeasure && phase.Load() == phaseMeasure {
					cl.rec.Record(time.Since(t0), status.Code(err))
				}
			}
		}()
	}
	if !sleepCtx(ctx, spec.Warmup) {
		phase.Store(phaseDone)
		stop()
		wg.Wait()
		return nil, ctx.Err()
	}
	cpu0, _ := procstat.CPUTime(0)
	start := time.Now()
	phase.Store(phaseMeasure)
	rec.StartedAt = start.UTC()
	interrupted := !sleepCtx(ctx, spec.Interval)
	phase.Store(phaseDone)
	elapsed := time.Since(start)
	cpu1, _ := procstat.CPUTime(0)
	if n, err := procstat.ConnsTo(0, hostPort(spec.Target)); err == nil {
		rec.ConnsObserved = n
	}
	stop()
	wg.Wait()
	fill(rec, stats.Merge(recs...), elapsed, cpu1-cpu0)
	if interrupted {
		rec.Status = result.StatusInterrupted
		rec.Error = "interrupted: the interval was cut short"
	}
	return rec, nil
}
