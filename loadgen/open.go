// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/anycall"
	"github.com/rpclab/rpclab/internal/procstat"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/stats"
	"github.com/rpclab/rpclab/verdict"
)

// DefaultMaxOutstanding bounds the RPCs an open-loop step keeps in flight
// unless told otherwise. Each concurrent RPC costs one goroutine and one
// latency histogram (about 220 KiB), made only when the schedule needs it.
const DefaultMaxOutstanding = 2000

// Pacing values of OpenSpec.Pacing (rpclab sweep --pacing).
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
	// Arrival is Constant or Poisson.
	Arrival string
	// Pacing is how the scheduler waits for each send: PrecisePacing (the
	// default on Linux: a wait of 150 µs or more is a nanosleep, which
	// ends within about 0.1 ms; shorter ones use a Go timer) or
	// TimerPacing (Go's timers only: they wake an idle client up to about
	// 1 ms late, since the runtime's netpoller waits in whole
	// milliseconds). The record says which ran ("timer" where nanosleep
	// is not available).
	Pacing string
	// MaxOutstanding bounds the RPCs in flight (default
	// DefaultMaxOutstanding). When the schedule needs more, the next send
	// waits for one to end: its latency still counts from its intended
	// time, and the wait is counted in the record's max_outstanding_hits.
	MaxOutstanding int
	// SLO, if set, is the objective each rate is checked against; a
	// layout's sweep stops at the first rate that misses it.
	SLO *verdict.SLO
	// Seed fixes Poisson schedules (0: a fixed default).
	Seed uint64
	// Call, when set, is the method every send calls with Request (rpclab
	// sweep --call); otherwise the sends are BenchmarkService pings.
	// Server-streaming calls count one RPC per call, timed to the last reply.
	Call    *anycall.Method
	Request proto.Message
	// Drain bounds how long RPCs still in flight at the end of the
	// interval are waited for (default 2 s, or Spec.RPCTimeout if larger);
	// those still running then are counted as DeadlineExceeded.
	Drain time.Duration
}

// pacing is the pacing that runs: Pacing, PrecisePacing by default, and
// TimerPacing where there is no nanosleep to use.
func (o *OpenSpec) pacing() string {
	if o.Pacing == TimerPacing || !nanosleepPacing {
		return TimerPacing
	}
	return PrecisePacing
}

// Validate checks o and returns a *UsageError naming the flag at fault.
func (o *OpenSpec) Validate() error {
	if len(o.Rates) == 0 {
		return usageErr("--rps", "no rate given")
	}
	for _, r := range o.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return usageErr("--rps", "%v is not a positive number of RPCs per second", r)
		}
	}
	if _, err := NewPacer(o.Arrival, 1, 0); err != nil {
		return err
	}
	if o.Pacing != "" && o.Pacing != TimerPacing && o.Pacing != PrecisePacing {
		return usageErr("--pacing", "unknown pacing %q (want %s or %s)", o.Pacing, TimerPacing, PrecisePacing)
	}
	if o.MaxOutstanding < 0 || o.MaxOutstanding > 100000 {
		return usageErr("--max-outstanding", "%d is outside 1..100000", o.MaxOutstanding)
	}
	if o.Drain < 0 {
		return usageErr("--drain", "negative duration %v", o.Drain)
	}
	return nil
}

func (o *OpenSpec) maxOutstanding() int {
	if o.MaxOutstanding == 0 {
		return DefaultMaxOutstanding
	}
	return o.MaxOutstanding
}

// SweepOpen runs every step of spec once per rate of open, rates ascending,
// and hands each record to sink as it is measured (as Sweep). With an SLO,
// a layout's rates stop at the first one that misses it; the results list
// the highest rate each layout sustained.
func SweepOpen(ctx context.Context, spec *Spec, open OpenSpec, o Options, sink func(*result.Record) error, prog Progress) ([]verdict.SLOResult, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := open.Validate(); err != nil {
		return nil, err
	}
	for _, r := range spec.RPCs {
		if r != Unary {
			return nil, usageErr("--rpc", "the open loop sends unary RPCs only, got %q", r)
		}
	}
	rates := slices.Clone(open.Rates)
	slices.Sort(rates)
	steps := spec.Steps()
	n := len(steps) * len(rates)
	var out []verdict.SLOResult
	var failedSteps, i int
	for _, st := range steps {
		res := verdict.SLOResult{Conn: st.Conn.String(), RPC: st.RPC, Inflight: st.Inflight}
		for _, rate := range rates {
			if prog.Start != nil {
				prog.Start(i, n, st)
			}
			rec, cause, err := runOpenStep(ctx, spec, st, &open, rate, o)
			if err != nil {
				return out, err
			}
			if rec.Status == result.StatusFailed {
				failedSteps++
			}
			if err := sink(rec); err != nil {
				return out, err
			}
			if prog.End != nil {
				prog.End(i, n, st, rec)
			}
			i++
			if rec.Status == result.StatusInterrupted {
				return out, ctx.Err()
			}
			if cause != nil {
				return out, cause
			}
			if open.SLO != nil {
				if ok, why := open.SLO.Sustained(rec); ok {
					res.MaxRate = rate
				} else {
					res.Missed, res.MissedWhy = rate, why
					break
				}
			}
		}
		out = append(out, res)
	}
	if failedSteps > 0 {
		return out, fmt.Errorf("loadgen: %d of %d open-loop steps failed", failedSteps, n)
	}
	return out, nil
}

// RunOpenStep runs one open-loop step at rate RPCs per second and returns
// its record (see runOpenStep).
func RunOpenStep(ctx context.Context, spec *Spec, step Step, open OpenSpec, rate float64, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := open.Validate(); err != nil {
		return nil, err
	}
	rec, _, err := runOpenStep(ctx, spec, step, &open, rate, o)
	return rec, err
}

// job is one scheduled send: when it was meant to go, on which connection,
// and whether it falls in the measured interval. Jobs travel by value.
type job struct {
	intended time.Time
	conn     int
	measured bool
}

// runOpenStep opens the step's layout, then sends unary RPCs on the
// pacer's schedule for spec.Warmup+spec.Interval, whatever the replies.
// One scheduler goroutine hands each send to an idle caller goroutine,
// starting a new one when none is idle, up to MaxOutstanding; beyond that
// the send waits and the wait is counted. Latency counts from the intended
// send time; the scheduler records the schedule lag (handed-off minus
// intended). Only sends intended inside the interval are recorded.
func runOpenStep(ctx context.Context, spec *Spec, step Step, open *OpenSpec, rate float64, o Options) (rec *result.Record, cause, err error) {
	rec = newRecord(spec, step, o)
	rec.Spec.LoadModel = "open"
	rec.Spec.RateRPS = rate
	rec.Spec.Arrival = open.Arrival
	if rec.Spec.Arrival == "" {
		rec.Spec.Arrival = Constant
	}
	rec.Spec.Pacing = open.pacing()
	if open.Call != nil {
		rec.Spec.Call = strings.TrimPrefix(open.Call.Path, "/")
	}
	maxOut := open.maxOutstanding()
	rec.Spec.MaxOutstanding = maxOut
	pacer, err := NewPacer(open.Arrival, rate, open.Seed+1)
	if err != nil {
		return nil, nil, err
	}
	pools, err := openLayout(spec.Target, step, o)
	if err != nil {
		return failed(rec, err), err, nil
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
			return nil, nil, ctx.Err()
		}
		cause = fmt.Errorf("%w: no connection to %s within %v: %v", ErrUnreachable, spec.Target, spec.DialTimeout, err)
		return failed(rec, cause), cause, nil
	}
	conns := make([]grpc.ClientConnInterface, len(pools))
	for i, p := range pools {
		conns[i] = p
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	body := make([]byte, spec.PayloadBytes)
	req := pingRequest(spec.PayloadBytes, body)
	jobs := make(chan job) // unbuffered: a send succeeds only when a caller is idle
	var wg sync.WaitGroup
	var callers []*stats.Recorder
	var cls []*caller
	spawn := func(first job) {
		r := stats.NewRecorder()
		callers = append(callers, r)
		c := &caller{conns: conns, rec: r, req: req, timeout: spec.RPCTimeout, call: open.Call, callReq: open.Request}
		if c.call != nil {
			c.callResp = c.call.NewResponse()
		}
		cls = append(cls, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.do(runCtx, ctx, first)
			for j := range jobs {
				c.do(runCtx, ctx, j)
			}
		}()
	}

	lag := stats.NewRecorder()
	var hits int64
	var sent int64
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	end := spec.Warmup + spec.Interval
	start := time.Now()
	measureAt := start.Add(spec.Warmup)
	var cpu0 time.Duration
	cpuTaken := false
	rec.ConnsObserved = -1
	connsDone := make(chan int, 1)
	go func() {
		n := -1
		if sleepCtx(runCtx, spec.Warmup+spec.Interval/2) {
			if v, err := procstat.ConnsTo(0, hostPort(spec.Target)); err == nil {
				n = v
			}
		}
		connsDone <- n
	}()
	interrupted := false
	next := 0
	waitUntil := func(ctx context.Context, at time.Time) bool {
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	if open.pacing() == PrecisePacing {
		waitUntil = precisePacing(waitUntil)
	}
schedule:
	for {
		off := pacer.Next()
		if off >= end {
			break
		}
		at := start.Add(off)
		if !waitUntil(ctx, at) {
			interrupted = true
			break schedule
		}
		measured := off >= spec.Warmup
		if measured && !cpuTaken {
			cpu0, _ = procstat.CPUTime(0)
			cpuTaken = true
			rec.StartedAt = at.UTC()
		}
		j := job{intended: at, conn: next, measured: measured}
		next++
		if next == len(conns) {
			next = 0
		}
		select {
		case jobs <- j:
		default:
			if len(callers) < maxOut {
				spawn(j)
				break
			}
			if measured {
				hits++
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				interrupted = true
				break schedule
			}
		}
		if measured {
			sent++
			lag.Record(time.Since(at), codes.OK)
		}
	}
	// The interval ends on the clock, not at the last send.
	if !interrupted && !sleepCtx(ctx, time.Until(start.Add(end))) {
		interrupted = true
	}
	elapsed := time.Since(measureAt)
	if !interrupted {
		elapsed = spec.Interval
	}
	cpu1, _ := procstat.CPUTime(0)
	close(jobs)
	drain := open.Drain
	if drain == 0 {
		drain = max(2*time.Second, spec.RPCTimeout)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	dt := time.NewTimer(drain)
	select {
	case <-finished:
	case <-dt.C:
		stop() // callers record what is cut off as DeadlineExceeded
		<-finished
	case <-ctx.Done():
		interrupted = true
		<-finished
	}
	dt.Stop()
	stop()
	rec.ConnsObserved = <-connsDone

	sum := stats.Merge(callers...)
	fill(rec, sum, elapsed, cpu1-cpu0)
	if !cpuTaken {
		rec.ClientCPUNS, rec.ClientCPUNSPerRPC = 0, 0
	}
	ls := stats.Merge(lag)
	q := stats.Quantiles(ls.Hist)
	rec.ScheduleLag = &q
	if h, err := stats.EncodeHistogram(ls.Hist); err == nil {
		rec.ScheduleLagHDR = h
	}
	if open.Call != nil && open.Call.ServerStreaming() {
		var msgs int64
		for _, c := range cls {
			msgs += c.msgs
		}
		rec.Messages = &msgs
	}
	rec.MaxOutstandingHits = &hits
	rec.Sent = &sent
	peak := int64(len(callers))
	rec.PeakOutstanding = &peak
	if interrupted {
		rec.Status = result.StatusInterrupted
		rec.Error = "interrupted: the interval was cut short"
	}
	return rec, nil, nil
}

// caller makes the RPCs handed to it, one at a time; it owns its recorder.
type caller struct {
	conns   []grpc.ClientConnInterface
	rec     *stats.Recorder
	req     *pb.SimpleRequest
	resp    pb.SimpleResponse
	timeout time.Duration
	// call, callReq and callResp replace the ping with any method.
	call     *anycall.Method
	callReq  proto.Message
	callResp proto.Message
	// msgs counts the replies of measured calls (server-streaming calls
	// have any number).
	msgs int64
	last int
}

func (c *caller) invoke(ctx context.Context, cc grpc.ClientConnInterface) error {
	if c.call != nil {
		n, err := c.call.Call(ctx, cc, c.callReq, c.callResp)
		c.last = n
		return err
	}
	c.last = 1
	return cc.Invoke(ctx, unaryMethod, c.req, &c.resp)
}

// do makes j's RPC under runCtx (ended by the drain) and records it if
// measured. An RPC cut off by the drain counts as DeadlineExceeded; one cut
// off because parent (the run) was stopped is not recorded.
func (c *caller) do(runCtx, parent context.Context, j job) {
	var err error
	if c.timeout > 0 {
		cctx, cancel := context.WithDeadline(runCtx, j.intended.Add(c.timeout))
		err = c.invoke(cctx, c.conns[j.conn])
		cancel()
	} else {
		err = c.invoke(runCtx, c.conns[j.conn])
	}
	if !j.measured {
		return
	}
	d := time.Since(j.intended)
	c.msgs += int64(c.last)
	code := status.Code(err)
	if err != nil && runCtx.Err() != nil {
		if parent.Err() != nil {
			return
		}
		code = codes.DeadlineExceeded
	}
	c.rec.Record(d, code)
}

// pingRequest is the BenchmarkService request asking for n bytes back.
func pingRequest(n int, body []byte) *pb.SimpleRequest {
	return &pb.SimpleRequest{ResponseSize: int32(n), Payload: &pb.Payload{Body: body}}
}
