// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
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
)

// Full method names of the BenchmarkService calls the workers make.
const (
	unaryMethod     = "/grpc.testing.BenchmarkService/UnaryCall"
	streamingMethod = "/grpc.testing.BenchmarkService/StreamingCall"
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
	if c.Call != nil {
		f.rec.Spec.Call = strings.TrimPrefix(c.Call.Path, "/")
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	calls := callContext(runCtx)
	var phase atomic.Int32
	recs := make([]*stats.Recorder, step.Inflight)
	var wg sync.WaitGroup
	p := pingOf(spec.Service, make([]byte, spec.PayloadBytes))
	var gap time.Duration
	if c.MaxRPS > 0 {
		gap = time.Duration(float64(step.Inflight) * 1e9 / c.MaxRPS)
	}
	for i := range recs {
		recs[i] = stats.NewRecorder()
		cl := &caller{rec: recs[i], ping: p, resp: p.newResp(), timeout: spec.RPCTimeout, call: c.Call, callReq: c.Request}
		if c.Call != nil {
			cl.callResp = c.Call.NewResponse()
		}
		cc := f.conns[i%len(f.conns)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if step.RPC == Streaming && c.Call == nil {
				cl.streaming(runCtx, cc, &phase)
			} else {
				cl.closedLoop(runCtx, calls, cc, &phase, gap)
			}
		}()
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
	elapsed := time.Since(start)
	cpu1, _ := procstat.CPUTime(0)
	f.host1 = readHost()
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

// caller makes RPCs one at a time and records them in its own recorder;
// the closed loop's workers and the open loop's callers are callers.
type caller struct {
	rec *stats.Recorder
	// ping is the service's ping, resp this caller's reply to it.
	ping    ping
	resp    any
	timeout time.Duration
	// call, callReq and callResp replace the ping with any method.
	call     *anycall.Method
	callReq  proto.Message
	callResp proto.Message
	// msgs counts the replies of measured calls (server-streaming calls
	// have any number).
	msgs int64
	last int
	// cut counts measured open-loop calls the drain cut off.
	cut int64
	// cell, when set, is where the closed loops record instead of rec (a
	// Live run, snapshotted while it runs).
	cell *liveCell
}

// record notes one RPC in the caller's recorder, or its Live cell.
func (c *caller) record(d time.Duration, code codes.Code, err error) {
	if c.cell != nil {
		c.cell.record(d, code, err)
		return
	}
	c.rec.RecordErr(d, code, err)
}

func (c *caller) invoke(ctx context.Context, cc grpc.ClientConnInterface) error {
	if c.call != nil {
		n, err := c.call.Call(ctx, cc, c.callReq, c.callResp)
		c.last = n
		return err
	}
	c.last = 1
	return cc.Invoke(ctx, c.ping.unary, c.ping.req, c.resp)
}

// invokeBy makes one RPC on cc that ends by deadline (none when zero): the
// per-RPC timeout of every loop.
func (c *caller) invokeBy(ctx context.Context, cc grpc.ClientConnInterface, deadline time.Time) error {
	if deadline.IsZero() {
		return c.invoke(ctx, cc)
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	err := c.invoke(cctx, cc)
	cancel()
	return err
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

// deadline is the per-RPC deadline of an RPC meant to start at t.
func (c *caller) deadline(t time.Time) time.Time {
	if c.timeout <= 0 {
		return time.Time{}
	}
	return t.Add(c.timeout)
}

// closedLoop keeps one RPC in flight on cc, starting each at most every
// gap (0: at once), until the phase is done or ctx ends. Each RPC is made
// under calls (callContext of ctx): when ctx ends, the calls in flight end
// when cc is closed. An RPC is recorded only if it both began and ended
// inside the measured interval and did not fail because the run itself
// was stopped.
func (c *caller) closedLoop(ctx, calls context.Context, cc grpc.ClientConnInterface, phase *atomic.Int32, gap time.Duration) {
	var t *time.Timer
	if gap > 0 {
		t = time.NewTimer(time.Hour)
		defer t.Stop()
	}
	next := time.Now()
	for {
		ph := phase.Load()
		if ph == phaseDone || ctx.Err() != nil {
			return
		}
		if gap > 0 {
			if w := time.Until(next); w > 0 {
				t.Reset(w)
				select {
				case <-t.C:
				case <-ctx.Done():
					return
				}
			}
			next = next.Add(gap)
		}
		if !c.once(ctx, calls, cc, ph, phase) {
			return
		}
	}
}

// once makes one RPC of the closed loop on cc under calls, begun in phase
// ph, and records it if it also ended in the measured phase. It returns
// false if the RPC failed because ctx (the run) ended. This is the whole
// per-RPC path of a closed-loop worker: it allocates nothing beyond what
// grpc-go's Invoke does (TestCallerAddsNoAllocations).
func (c *caller) once(ctx, calls context.Context, cc grpc.ClientConnInterface, ph int32, phase *atomic.Int32) bool {
	t0 := time.Now()
	err := c.invokeBy(calls, cc, c.deadline(t0))
	if err != nil && ctx.Err() != nil {
		return false
	}
	if ph == phaseMeasure && phase.Load() == phaseMeasure {
		c.record(time.Since(t0), status.Code(err), err)
	}
	return true
}

// streaming keeps one ping in flight on a bidi stream of cc, opening a new
// stream when one breaks, and records as closedLoop does.
func (c *caller) streaming(ctx context.Context, cc grpc.ClientConnInterface, phase *atomic.Int32) {
	done := func(began int32, d time.Duration, err error) {
		if err != nil && ctx.Err() != nil {
			return
		}
		if began == phaseMeasure && phase.Load() == phaseMeasure {
			c.record(d, status.Code(err), err)
		}
	}
	for phase.Load() != phaseDone && ctx.Err() == nil {
		ph := phase.Load()
		t0 := time.Now()
		s, err := cc.NewStream(ctx, c.ping.desc, c.ping.streaming)
		if err != nil {
			done(ph, time.Since(t0), err)
			continue
		}
		for {
			ph := phase.Load()
			if ph == phaseDone || ctx.Err() != nil {
				return
			}
			t0 := time.Now()
			// SendMsg reports a broken stream as io.EOF; RecvMsg then
			// returns the stream's status, so its error is the one kept.
			_ = s.SendMsg(c.ping.req)
			err := s.RecvMsg(c.resp)
			if err == nil {
				done(ph, time.Since(t0), nil)
				continue
			}
			if errors.Is(err, io.EOF) {
				err = status.Error(codes.Unavailable, "stream ended by the server")
			}
			done(ph, time.Since(t0), err)
			break
		}
	}
}

// pingRequest is the BenchmarkService request asking for n bytes back.
func pingRequest(n int, body []byte) *pb.SimpleRequest {
	return &pb.SimpleRequest{ResponseSize: int32(n), Payload: &pb.Payload{Body: body}}
}
