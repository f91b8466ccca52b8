// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/verdict"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// stallServer answers at once, except that for the first 200 ms of every
// second (counted from its start) every call waits for the stall to end,
// as a server pausing for garbage collection would.
type stallServer struct {
	pb.UnimplementedBenchmarkServiceServer
	start time.Time
}

const stall = 200 * time.Millisecond

func (s *stallServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	phase := time.Since(s.start) % time.Second
	if phase < stall {
		t := time.NewTimer(stall - phase)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &pb.SimpleResponse{}, nil
}

func startStallServer(t *testing.T) string {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, &stallServer{start: time.Now()})
	return testutil.Serve(t, s)
}

// TestOpenLoopShowsStall: the closed loop stops sending while the server
// stalls, so a stall is one slow RPC per caller and its RPCs that waited
// out a stall are few; the open loop keeps sending, so every send due
// during the stall waits, and many of its RPCs show the stall. Counts are
// compared, not latencies: a busy machine's own pauses slow both loops'
// RPCs (the open loop's more, from their intended send), never in the
// closed loop's favour. Both pacings keep the schedule: every send due in
// the interval is made.
func TestOpenLoopShowsStall(t *testing.T) {
	for _, pacing := range []string{TimerPacing, PrecisePacing} {
		t.Run(pacing, func(t *testing.T) { testOpenLoopShowsStall(t, pacing) })
	}
}

// slowRPCs is how many of rec's successful RPCs took at least d.
func slowRPCs(t *testing.T, rec *result.Record, d time.Duration) int64 {
	t.Helper()
	h, err := stats.DecodeHistogram(rec.HistogramHDR)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= int64(d) {
			n += b.Count
		}
	}
	return n
}

func testOpenLoopShowsStall(t *testing.T, pacing string) {
	ctx := testutil.Context(t)
	target := startStallServer(t)
	spec := shortSpec(target)
	spec.Warmup = 100 * time.Millisecond
	spec.Interval = 1200 * time.Millisecond // holds at least one whole stall
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}

	closed, err := RunStep(ctx, spec, step, Options{})
	if err != nil {
		t.Fatal(err)
	}
	open, err := RunOpenStep(ctx, spec, step, OpenSpec{Rates: []float64{500}, OpenLoop: OpenLoop{Arrival: Constant, Pacing: pacing, MaxOutstanding: DefaultMaxOutstanding}}, 500, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if closed.Status != result.StatusOK || open.Status == result.StatusFailed {
		t.Fatalf("got statuses %q (%s) and %q (%s), want ok and not failed (a busy machine may leave the open loop overloaded)", closed.Status, closed.Error, open.Status, open.Error)
	}
	cslow, oslow := slowRPCs(t, closed, stall/2), slowRPCs(t, open, stall/2)
	t.Logf("closed: %d RPCs, %d of them slower than %v; open at 500 rps: %d RPCs, %d slower, lag p99 %v, peak outstanding %d",
		closed.Requests, cslow, stall/2, open.Requests, oslow, time.Duration(open.ScheduleLag.P99NS), *open.PeakOutstanding)
	// A stall of 200 ms holds about 100 sends due at 500/s; the closed
	// loop's one caller waits it out once.
	if oslow < 5*max(cslow, 1) {
		t.Errorf("got %d slow RPCs in the open loop, %d in the closed loop: want the open loop's at least 5 times as many (the stall shown, not hidden)", oslow, cslow)
	}
	if open.Spec.LoadModel != "open" || open.Spec.RateRPS != 500 || open.Spec.Arrival != Constant || open.Spec.Pacing != pacing {
		t.Errorf("got spec %+v, want load_model open, rate 500, arrival constant, pacing %s", open.Spec, pacing)
	}
	if want := int64(500 * spec.Interval.Seconds()); *open.Sent != want {
		t.Errorf("sent %d in the interval, want %d (500 rps for %v)", *open.Sent, want, spec.Interval)
	}
	if b, err := json.Marshal(open); err != nil {
		t.Fatal(err)
	} else if err := result.Validate(b); err != nil {
		t.Errorf("open record does not validate: %v", err)
	}
}

// TestOpenLoopBoundShowsInLag: with one RPC allowed in flight the client
// cannot keep its schedule through a stall: the bound is hit, counted, and
// the schedule lag shows the client is behind.
func TestOpenLoopBoundShowsInLag(t *testing.T) {
	ctx := testutil.Context(t)
	target := startStallServer(t)
	spec := shortSpec(target)
	spec.Warmup = 100 * time.Millisecond
	spec.Interval = 1200 * time.Millisecond
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	open := OpenSpec{Rates: []float64{200}, OpenLoop: OpenLoop{Arrival: Poisson, MaxOutstanding: 1}}
	rec, err := RunOpenStep(ctx, spec, step, open, 200, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lag := time.Duration(rec.ScheduleLag.P99NS)
	t.Logf("hits %d, lag p99 %v, latency p99 %v", *rec.MaxOutstandingHits, lag, time.Duration(rec.Latency.P99NS))
	if *rec.MaxOutstandingHits == 0 {
		t.Errorf("got 0 max-outstanding hits, want some")
	}
	if lag < stall/2 {
		t.Errorf("got schedule lag p99 %v, want at least %v", lag, stall/2)
	}
	if *rec.PeakOutstanding != 1 {
		t.Errorf("got peak outstanding %d, want 1", *rec.PeakOutstanding)
	}
}

// TestSweepOpenSLO: against rpclab's server a modest rate meets a loose
// objective on every layout and an impossible one misses it, with a reason
// (the records judged afterwards by verdict.SLOResults), and the SLO's
// stop predicate ends each layout's rates at its first miss.
func TestSweepOpenSLO(t *testing.T) {
	ctx := testutil.Context(t)
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	// A second's interval: a pause of this shared machine near a step's
	// end costs a 0.4 s step its 95% of the offered rate.
	spec.Interval = time.Second
	spec.Inflight = []int{2}
	spec.Conns = []ConnMode{{Kind: Shared}, {Kind: PerWorker}}
	tests := []struct {
		slo      string
		wantRate float64
	}{
		{"p50=5s", 100},
		{"p99=1ns", 0},
	}
	for _, tc := range tests {
		slo, err := verdict.ParseSLO(tc.slo)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*result.Record
		err = SweepOpen(ctx, spec, OpenSpec{Rates: []float64{100, 50}, Stop: slo.Missed, OpenLoop: OpenLoop{MaxOutstanding: DefaultMaxOutstanding}}, Options{},
			func(r *result.Record) error { recs = append(recs, r); return nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]result.Record, len(recs))
		for i, r := range recs {
			vals[i] = *r
		}
		res := verdict.SLOResults(*slo, vals)
		if len(res) != 2 {
			t.Fatalf("%s: got %d results, want 2", tc.slo, len(res))
		}
		for _, r := range res {
			if r.MaxRate != tc.wantRate {
				t.Errorf("%s %s: got max rate %v, want %v (missed %v: %s)", tc.slo, r.Conn, r.MaxRate, tc.wantRate, r.Missed, r.MissedWhy)
			}
			if tc.wantRate == 0 && (r.Missed != 50 || r.MissedWhy == "") {
				t.Errorf("%s %s: got missed %v %q, want 50 (the lowest rate) with a reason", tc.slo, r.Conn, r.Missed, r.MissedWhy)
			}
		}
		if tc.wantRate == 0 && len(recs) != 2 {
			t.Errorf("%s: got %d records, want 2 (a layout stops at its first miss)", tc.slo, len(recs))
		}
		for _, r := range recs {
			if r.Spec.Inflight != 2 || (ConnKind(r.Spec.ConnMode) == PerWorker && r.ConnsObserved != -1 && r.ConnsObserved != 2) {
				t.Errorf("got inflight %d conns %d for %s, want 2 and 2", r.Spec.Inflight, r.ConnsObserved, r.Spec.ConnMode)
			}
		}
	}
}

func TestOpenBadInput(t *testing.T) {
	spec := shortSpec("127.0.0.1:1")
	spec.Conns = []ConnMode{{Kind: Shared}}
	tests := []struct {
		name string
		open OpenSpec
		rpc  string
		want error
	}{
		{"no rate", OpenSpec{OpenLoop: OpenLoop{MaxOutstanding: 1}}, Unary, ErrRate},
		{"zero rate", OpenSpec{Rates: []float64{0}, OpenLoop: OpenLoop{MaxOutstanding: 1}}, Unary, ErrRate},
		{"bad arrival", OpenSpec{Rates: []float64{1}, OpenLoop: OpenLoop{Arrival: "bursty", MaxOutstanding: 1}}, Unary, ErrArrival},
		{"bad pacing", OpenSpec{Rates: []float64{1}, OpenLoop: OpenLoop{Pacing: "spin", MaxOutstanding: 1}}, Unary, ErrPacing},
		{"negative bound", OpenSpec{Rates: []float64{1}, OpenLoop: OpenLoop{MaxOutstanding: -1}}, Unary, ErrMaxOutstanding},
		// 0 is not a silent default (issue 16).
		{"zero bound", OpenSpec{Rates: []float64{1}, OpenLoop: OpenLoop{MaxOutstanding: 0}}, Unary, ErrMaxOutstanding},
		{"streaming", OpenSpec{Rates: []float64{1}, OpenLoop: OpenLoop{MaxOutstanding: 1}}, Streaming, ErrRPC},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := *spec
			s.RPCs = []string{tc.rpc}
			err := SweepOpen(testutil.Context(t), &s, tc.open, Options{}, func(*result.Record) error { return nil }, nil)
			var ue *usage.Error
			if !errors.As(err, &ue) || !errors.Is(err, tc.want) {
				t.Errorf("got %v, want a *usage.Error for %v", err, tc.want)
			}
		})
	}
	for _, s := range []string{"p99", "q99=1ms", "p99=soon", "p0=1ms", "p99=-1ms"} {
		if _, err := verdict.ParseSLO(s); err == nil {
			t.Errorf("verdict.ParseSLO(%q): got nil error, want one", s)
		}
	}
}

// threeServer answers StreamingFromServer with three replies.
type threeServer struct {
	pb.UnimplementedBenchmarkServiceServer
}

func (threeServer) StreamingFromServer(_ *pb.SimpleRequest, s pb.BenchmarkService_StreamingFromServerServer) error {
	for i := 0; i < 3; i++ {
		if err := s.Send(&pb.SimpleResponse{}); err != nil {
			return err
		}
	}
	return nil
}

// TestOpenLoopServerStreamingCall: a server-streaming --call counts one
// request per call and every reply in messages.
func TestOpenLoopServerStreamingCall(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, threeServer{})
	spec := shortSpec(testutil.Serve(t, s))
	spec.Conns = []ConnMode{{Kind: Shared}}
	m, err := dyncall.Find(protoregistry.GlobalFiles, "grpc.testing.BenchmarkService/StreamingFromServer")
	if err != nil {
		t.Fatal(err)
	}
	req, err := m.Request(nil)
	if err != nil {
		t.Fatal(err)
	}
	open := OpenSpec{Rates: []float64{100}, Workload: CallWorkload(m, req), OpenLoop: OpenLoop{MaxOutstanding: DefaultMaxOutstanding}}
	rec, err := RunOpenStep(testutil.Context(t), spec, Step{Conn: spec.Conns[0], RPC: Unary, Inflight: 1}, open, 100, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != result.StatusOK || rec.Messages == nil || *rec.Messages != 3*rec.Requests || rec.Requests == 0 {
		t.Errorf("got status %q, %d requests, messages %v; want ok and 3 messages per request", rec.Status, rec.Requests, rec.Messages)
	}
	if rec.Spec.Call != "grpc.testing.BenchmarkService/StreamingFromServer" {
		t.Errorf("got spec.call %q, want the method", rec.Spec.Call)
	}
}

// TestPrecisePacingStopsWhenCancelled drives the precise pacing (every
// wait arms the kernel timer) and cancels the step while it waits: the
// sends keep their schedule, the step stops at once even when the next
// send is far off, and the record says it was interrupted.
func TestPrecisePacingStopsWhenCancelled(t *testing.T) {
	if !kernelPacing {
		t.Skip("no kernel timer here: precise pacing is the timer's")
	}
	tests := []struct {
		name    string
		rate    float64
		answers int64 // the server's answers before the cancel
	}{
		// Sends 20 ms apart: each wait arms the kernel timer.
		{"every 20ms", 50, 8},
		// Sends at 0 and 30 s: the scheduler is asleep when cancelled,
		// and a step that waited for its next send would outlast the
		// test's deadline.
		{"every 30s", 1.0 / 30, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testutil.Context(t))
			defer cancel()
			var answered atomic.Int64
			count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				resp, err := h(ctx, req)
				if strings.Contains(info.FullMethod, "UnaryCall") && answered.Add(1) == tc.answers {
					cancel()
				}
				return resp, err
			}
			target := testutil.Serve(t, server.New(server.Options{}, grpc.ChainUnaryInterceptor(count)))
			spec := shortSpec(target)
			spec.Warmup = 0
			spec.Interval = time.Minute
			spec.Conns = []ConnMode{{Kind: Shared}}
			step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
			open := OpenSpec{Rates: []float64{tc.rate}, OpenLoop: OpenLoop{Pacing: PrecisePacing, MaxOutstanding: DefaultMaxOutstanding}}
			start := time.Now()
			rec, err := RunOpenStep(ctx, spec, step, open, tc.rate, Options{})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("got error %v, want an interrupted record", err)
			}
			if rec.Status != result.StatusInterrupted || rec.Spec.Pacing != PrecisePacing {
				t.Errorf("got status %q pacing %q, want interrupted, precise", rec.Status, rec.Spec.Pacing)
			}
			// The sends keep their schedule: at least those answered, and
			// no more than the schedule had due by the step's end (one at
			// 0, then one each 1/rate), however long the machine took.
			if most := int64(elapsed.Seconds()*tc.rate) + 1; *rec.Sent < tc.answers || *rec.Sent > most {
				t.Errorf("got %d sends in %v, want %d..%d at %v rps", *rec.Sent, elapsed, tc.answers, most, tc.rate)
			}
		})
	}
}

// TestOpenLoopPastCapacity: 1e6 RPCs a second from one client is far past
// what it can send. The step still ends at its interval (issue 16: a 2 s
// step at 200000 rps took 15.7 s), counts what it did not send, says it
// was overloaded, and gives the throughput of what completed over the time
// it really took.
func TestOpenLoopPastCapacity(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.Warmup, spec.Interval = 200*time.Millisecond, 500*time.Millisecond
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: spec.Conns[0], RPC: Unary, Inflight: 1}
	const rate = 1e6
	// A bound of 100 in flight: the sends also wait for a free caller, a
	// wait the interval's end must cut too.
	open := OpenSpec{Rates: []float64{rate}, OpenLoop: OpenLoop{MaxOutstanding: 100, Drain: 500 * time.Millisecond}}
	start := time.Now()
	rec, err := RunOpenStep(testutil.Context(t), spec, step, open, rate, Options{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %v: status %s (%s), sent %d, unsent %d, requests %d, %.0f rps over %v",
		took, rec.Status, rec.Error, *rec.Sent, *rec.Unsent, rec.Requests, rec.ThroughputRPS, time.Duration(rec.DurationNS))
	// Before issue 16 it ran until every send was made: minutes here.
	if bound := spec.Warmup + spec.Interval + open.Drain + 10*time.Second; took > bound {
		t.Errorf("the step took %v, want at most %v (its warm-up, interval and drain, and set-up and slack for -race)", took, bound)
	}
	if rec.Status != result.StatusOverloaded || !strings.Contains(rec.Error, "not made") {
		t.Errorf("got status %q (%s), want overloaded", rec.Status, rec.Error)
	}
	// Constant pacing: the interval holds exactly rate x interval sends.
	if due := *rec.Sent + *rec.Unsent; due != int64(rate*spec.Interval.Seconds()) || *rec.Unsent == 0 {
		t.Errorf("got sent %d + unsent %d, want %d with some unsent", *rec.Sent, *rec.Unsent, int64(rate*spec.Interval.Seconds()))
	}
	d := time.Duration(rec.DurationNS)
	if d < spec.Interval || d > spec.Interval+maxLate+250*time.Millisecond {
		t.Errorf("got duration %v, want the interval as it ran (%v and a little)", d, spec.Interval)
	}
	ok := rec.Requests
	for _, n := range rec.Errors {
		ok -= n
	}
	if want := float64(ok) / d.Seconds(); rec.ThroughputRPS != want || rec.ThroughputRPS >= rate/2 {
		t.Errorf("got throughput %.0f, want %.0f (completed over the real duration), far below the offered %v", rec.ThroughputRPS, want, rate)
	}
	if b, err := json.Marshal(rec); err != nil {
		t.Fatal(err)
	} else if err := result.Validate(b); err != nil {
		t.Errorf("record does not validate: %v", err)
	}
}

// hangServer answers every call at once except every tenth, which waits
// until the caller gives up.
type hangServer struct {
	pb.UnimplementedBenchmarkServiceServer
	n atomic.Int64
}

func (s *hangServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	if s.n.Add(1)%10 == 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &pb.SimpleResponse{}, nil
}

// TestOverloadedStepCutOffsAreNotFailures: a client held at its bound of
// outstanding calls leaves them in flight at the interval's end; the drain
// cuts them off. When those cut-offs are the step's only failures, the step
// is overloaded (what the client could not send), not failed, and says how
// many were cut off. A step with other failures stays failed.
func TestOverloadedStepCutOffsAreNotFailures(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, &hangServer{})
	spec := shortSpec(testutil.Serve(t, s))
	spec.Warmup, spec.Interval = 0, 300*time.Millisecond
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: spec.Conns[0], RPC: Unary, Inflight: 1}
	const rate = 2000
	open := OpenSpec{Rates: []float64{rate}, OpenLoop: OpenLoop{MaxOutstanding: 20, Drain: 20 * time.Millisecond}}
	rec, err := RunOpenStep(testutil.Context(t), spec, step, open, rate, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cut := rec.Errors["DeadlineExceeded"]
	t.Logf("status %s (%s), requests %d, errors %v, unsent %d", rec.Status, rec.Error, rec.Requests, rec.Errors, *rec.Unsent)
	if cut == 0 || float64(cut) <= MaxErrorShare*float64(rec.Requests) {
		t.Fatalf("got %d cut-offs of %d RPCs, want more than %g%% (the test's premise)", cut, rec.Requests, 100*MaxErrorShare)
	}
	if rec.Status != result.StatusOverloaded || !strings.Contains(rec.Error, "cut off") {
		t.Errorf("got status %q (%s), want overloaded naming the cut-offs", rec.Status, rec.Error)
	}
}
