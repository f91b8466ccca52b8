// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/usagepb"
)

// allocsPerRPC is the mean number of heap allocations of f over n runs,
// in the whole process (the loopback server's included), measured as
// testing.AllocsPerRun does (one P, after a warm-up run) but kept as a
// fraction, so that a background allocation now and then is not rounded
// into a whole one.
func allocsPerRPC(n int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		f()
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(n)
}

// minAllocs is the least of rounds measures of allocsPerRPC: noise only
// ever adds allocations.
func minAllocs(rounds, n int, f func()) float64 {
	best := allocsPerRPC(n, f)
	for range rounds - 1 {
		best = min(best, allocsPerRPC(n, f))
	}
	return best
}

// TestCallerAddsNoAllocations: the per-RPC path of a closed-loop worker
// (closedRun.once: the call through the step's pool under the step's call
// context, timed and recorded) and of an open-loop sender
// (dispatcher.send)
// allocate nothing beyond what grpc-go's own Invoke allocates on a bare
// ClientConn with context.Background() (what grpc-go's benchmark client
// calls with), against the same real loopback server. Counts, not times.
func TestCallerAddsNoAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("counts allocations over thousands of RPCs")
	}
	ctx := testutil.Context(t)
	target := testutil.Serve(t, server.New(server.Options{}))

	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	req := pingRequest(0, nil)
	resp := &pb.SimpleResponse{}
	bare := func() {
		if err := cc.Invoke(context.Background(), unaryMethod, req, resp); err != nil {
			t.Fatal(err)
		}
	}

	// The step's own set-up: its frame (a shared pool of one connection),
	// run and call contexts, and a caller as runClosed makes it.
	spec := shortSpec(target)
	f, cause, err := openFrame(ctx, spec, Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}, Options{})
	if err != nil || cause != nil {
		t.Fatalf("openFrame: %v %v", err, cause)
	}
	defer f.close()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	calls := callContext(runCtx)
	rec := stats.NewRecorder()
	w := PingWorkload(Benchmark, Unary, spec.PayloadBytes)
	cl := w.NewCaller()
	var phase atomic.Int32
	phase.Store(phaseMeasure)
	run := &closedRun{ctx: runCtx, calls: calls, phase: &phase}
	var slot callStart
	closed := func() {
		if !run.once(cl, rec, f.conns[0], phaseMeasure, &slot) {
			t.Fatal("once: the run ended")
		}
	}
	d := newDispatcher(ctx, f, spec, w, 1, &fixedWindow{})
	defer d.cancel()
	s := &sender{c: cl, rec: rec}
	open := func() {
		d.send(s, job{intended: time.Now(), measured: true})
	}

	const rounds, n = 3, 2000
	want := minAllocs(rounds, n, bare)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"closed loop (once)", closed},
		{"open loop (send)", open},
	} {
		got := minAllocs(rounds, n, tc.f)
		t.Logf("%s: %.2f allocations per RPC; grpc-go's Invoke alone: %.2f", tc.name, got, want)
		// An allocation of rpclab's own adds a whole one per RPC.
		if got-want >= 0.5 {
			t.Errorf("%s: got %.2f allocations per RPC, want at most grpc-go's Invoke's %.2f (rpclab adds none of its own)", tc.name, got, want)
		}
	}
	if got := stats.Merge(rec).OK(); got < 2*rounds*n {
		t.Errorf("recorded %d RPCs, want at least %d: the measured path was not the recording one", got, 2*rounds*n)
	}
	if errs := stats.Merge(rec).Errors(); len(errs) != 0 {
		t.Errorf("got errors %v, want none", errs)
	}
}

// TestCallsShareNoCancellation: every unary call a step makes, closed or
// open loop, and every call of a worker's open load (Live at a rate),
// is given a context with no cancellation of its own (Done is
// nil), as grpc-go's benchmark client's context.Background(): grpc-go's
// per-call child context then registers with no parent, where a run
// context shared by every worker would take its mutex twice per RPC. (The
// stop ends calls by closing the connections; TestStopEndsCallsInFlight.)
func TestCallsShareNoCancellation(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	var calls, cancellable atomic.Int64
	spy := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method != unaryMethod { // the step's other calls (the server's CPU time)
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		calls.Add(1)
		if ctx.Done() != nil {
			cancellable.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: Shared}}
	o := Options{DialOptions: []grpc.DialOption{spy}}
	for _, conn := range []ConnMode{{Kind: Shared}, {Kind: PerWorker}} {
		step := Step{Conn: conn, RPC: Unary, Inflight: 2}
		for _, loop := range []string{"closed", "open", "worker's open"} {
			calls.Store(0)
			cancellable.Store(0)
			var requests int64
			var why string
			switch loop {
			case "closed", "open":
				var rec *result.Record
				var err error
				if loop == "closed" {
					rec, err = RunStep(testutil.Context(t), spec, step, o)
				} else {
					rec, err = RunOpenStep(testutil.Context(t), spec, step, OpenSpec{Rates: []float64{500}, OpenLoop: OpenLoop{MaxOutstanding: 10}}, 500, o)
				}
				if err != nil {
					t.Fatal(err)
				}
				requests, why = rec.Requests, fmt.Sprintf("status %q (%s)", rec.Status, rec.Error)
			default: // a worker's open load (Live at a rate)
				l, err := StartLive(testutil.Context(t), spec, step, openLoad(500, Poisson), o)
				if err != nil {
					t.Fatal(err)
				}
				waitRecorded(t, testutil.Context(t), l, 1)
				l.Stop()
				requests, why = l.Snapshot(false).Total(), "a Live run"
			}
			if requests == 0 || calls.Load() == 0 {
				t.Fatalf("%s loop, %s: %s after %d calls, want calls", loop, conn, why, calls.Load())
			}
			if got := cancellable.Load(); got != 0 {
				t.Errorf("%s loop, %s: got %d of %d calls with a cancellable context, want 0", loop, conn, got, calls.Load())
			}
		}
	}
}

// stuckServer answers no unary call: each waits until the client goes.
// started is closed at the first call, nth at the nth, read at the first
// read of its CPU (UsageService: a closed-loop step's interval begins
// when its answer arrives).
type stuckServer struct {
	server.Ping
	n                  int64
	calls              atomic.Int64
	started, nth, read chan struct{}
	once, onceN, onceR sync.Once
}

func newStuckServer(n int64) *stuckServer {
	return &stuckServer{n: n, started: make(chan struct{}), nth: make(chan struct{}), read: make(chan struct{})}
}

func (h *stuckServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	h.once.Do(func() { close(h.started) })
	if h.calls.Add(1) >= h.n {
		h.onceN.Do(func() { close(h.nth) })
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// usageSignal is the server's CPU read, closing its stuckServer's read.
type usageSignal struct {
	usagepb.UnimplementedUsageServiceServer
	usage server.Usage
	h     *stuckServer
}

func (u *usageSignal) Usage(ctx context.Context, req *usagepb.UsageRequest) (*usagepb.UsageResponse, error) {
	defer u.h.onceR.Do(func() { close(u.h.read) })
	return u.usage.Usage(ctx, req)
}

// TestStopEndsCallsInFlight: calls that would never end (the server holds
// them) still end promptly when the run is stopped, in the closed and the
// open loop, and when the open loop's drain runs out; the calls cut by a
// stop are not counted, those cut by the drain count as DeadlineExceeded.
func TestStopEndsCallsInFlight(t *testing.T) {
	const bound = 10 * time.Second // set-up and slack for -race on a loaded machine
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 4}
	// The open loop's sends at 100 rps after a 50 ms warm-up (shortSpec):
	// the 7th send made was intended at 60 ms or later, in the interval.
	const openInInterval = 7
	// run runs f against a stuckServer and, with stopAt, cancels it once
	// stopAt's channel of that server is closed (nil: never).
	run := func(t *testing.T, f func(ctx context.Context, spec *Spec) (*result.Record, error), stopAt func(*stuckServer) <-chan struct{}) *result.Record {
		t.Helper()
		h := newStuckServer(openInInterval)
		s := grpc.NewServer()
		pb.RegisterBenchmarkServiceServer(s, h)
		usagepb.RegisterUsageServiceServer(s, &usageSignal{h: h})
		target := testutil.Serve(t, s)
		ctx, cancel := context.WithCancel(testutil.Context(t))
		defer cancel()
		type out struct {
			rec *result.Record
			err error
		}
		done := make(chan out, 1)
		spec := shortSpec(target)
		spec.Conns = []ConnMode{step.Conn}
		go func() {
			rec, err := f(ctx, spec)
			done <- out{rec, err}
		}()
		if stopAt != nil {
			select {
			case <-stopAt(h):
			case <-time.After(bound):
				t.Fatal("the step did not reach the point it is stopped at")
			}
			cancel()
		}
		select {
		case o := <-done:
			if o.err != nil {
				t.Fatal(o.err)
			}
			return o.rec
		case <-time.After(bound):
			t.Fatalf("the step did not end within %v of its stop: calls in flight were not cut", bound)
			return nil
		}
	}

	t.Run("closed loop, stopped", func(t *testing.T) {
		rec := run(t, func(ctx context.Context, spec *Spec) (*result.Record, error) {
			spec.Interval = time.Minute
			return RunStep(ctx, spec, step, Options{})
		}, func(h *stuckServer) <-chan struct{} { return h.read })
		if rec.Status != result.StatusInterrupted || rec.Requests != 0 {
			t.Errorf("got status %q, %d requests (errors %v), want interrupted with none counted", rec.Status, rec.Requests, rec.Errors)
		}
	})
	t.Run("open loop, stopped", func(t *testing.T) {
		open := OpenSpec{Rates: []float64{100}, OpenLoop: OpenLoop{MaxOutstanding: 10, Drain: time.Minute}}
		rec := run(t, func(ctx context.Context, spec *Spec) (*result.Record, error) {
			spec.Interval = time.Minute
			return RunOpenStep(ctx, spec, step, open, 100, Options{})
		}, func(h *stuckServer) <-chan struct{} { return h.nth })
		if rec.Status != result.StatusInterrupted || rec.Requests != 0 {
			t.Errorf("got status %q, %d requests (errors %v), want interrupted with none counted", rec.Status, rec.Requests, rec.Errors)
		}
	})
	t.Run("live run, stopped", func(t *testing.T) {
		rec := run(t, func(ctx context.Context, spec *Spec) (*result.Record, error) {
			l, err := StartLive(context.Background(), spec, step, Load{}, Options{})
			if err != nil {
				return nil, err
			}
			<-ctx.Done()
			l.Stop() // must end the calls stuck in the server
			snap := l.Snapshot(false)
			return &result.Record{Status: result.StatusInterrupted, Requests: snap.Summary.Total()}, nil
		}, func(h *stuckServer) <-chan struct{} { return h.started })
		if rec.Requests != 0 {
			t.Errorf("got %d requests counted, want none (calls cut by a stop are not counted)", rec.Requests)
		}
	})
	t.Run("live paced run, stopped", func(t *testing.T) {
		rec := run(t, func(ctx context.Context, spec *Spec) (*result.Record, error) {
			l, err := StartLive(context.Background(), spec, step, openLoad(100, Poisson), Options{})
			if err != nil {
				return nil, err
			}
			<-ctx.Done()
			l.Stop() // must end the open load's calls stuck in the server
			snap := l.Snapshot(false)
			return &result.Record{Status: result.StatusInterrupted, Requests: snap.Summary.Total()}, nil
		}, func(h *stuckServer) <-chan struct{} { return h.started })
		if rec.Requests != 0 {
			t.Errorf("got %d requests counted, want none (calls cut by a stop are not counted)", rec.Requests)
		}
	})
	t.Run("open loop, drained", func(t *testing.T) {
		open := OpenSpec{Rates: []float64{100}, OpenLoop: OpenLoop{MaxOutstanding: 10, Drain: 300 * time.Millisecond}}
		rec := run(t, func(ctx context.Context, spec *Spec) (*result.Record, error) {
			return RunOpenStep(ctx, spec, step, open, 100, Options{})
		}, nil)
		if rec.Requests == 0 || rec.Errors["DeadlineExceeded"] != rec.Requests {
			t.Errorf("got %d requests, errors %v; want every measured call cut by the drain, as DeadlineExceeded", rec.Requests, rec.Errors)
		}
	})
}
