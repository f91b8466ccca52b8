// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

func shortSpec(target string) *Spec {
	return &Spec{
		Target: target, RPCs: []string{Unary}, Inflight: []int{1},
		Warmup: 50 * time.Millisecond, Interval: 300 * time.Millisecond, DialTimeout: 2 * time.Second,
	}
}

// TestSweepCountsRealConnections runs a short sweep against a real server and
// checks each layout opens the connections it should, as the OS sees them.
func TestSweepCountsRealConnections(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.RPCs = []string{Unary, Streaming}
	spec.Inflight = []int{1, 4}
	spec.PayloadBytes = 100
	spec.Conns = []ConnMode{{Kind: Shared}, {Kind: PerWorker}, {Kind: Pooled, N: 2, Pick: pool.RoundRobin}}
	var recs []*result.Record
	err := Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error {
		recs = append(recs, r)
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return result.Validate(b)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 12; got != want {
		t.Fatalf("got %d records, want %d", got, want)
	}
	for _, r := range recs {
		want := map[ConnKind]int{Shared: 1, PerWorker: r.Spec.Inflight, Pooled: 2}[ConnKind(r.Spec.ConnMode)]
		if ConnKind(r.Spec.ConnMode) == Pooled && r.Spec.Inflight == 1 {
			// One worker on a round-robin pool of 2 touches both connections.
			want = 2
		}
		if r.ConnsObserved != want {
			t.Errorf("%s %s inflight=%d: got %d connections, want %d", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.ConnsObserved, want)
		}
		if r.Status != result.StatusOK || r.Requests == 0 || len(r.Errors) != 0 {
			t.Errorf("%s %s inflight=%d: status %s, %d requests, errors %v", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.Status, r.Requests, r.Errors)
		}
		if r.Latency.P50NS <= 0 || r.Latency.P100NS < r.Latency.P99NS || r.ThroughputRPS <= 0 || r.ClientCPUNS <= 0 {
			t.Errorf("%s %s inflight=%d: implausible figures %+v", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r)
		}
	}
}

// flaky fails every other unary call with ResourceExhausted.
type flaky struct {
	server.Ping
	n atomic.Int64
}

func (f *flaky) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	if f.n.Add(1)%2 == 0 {
		return nil, status.Error(codes.ResourceExhausted, "every other call fails")
	}
	return f.Ping.UnaryCall(ctx, req)
}

type alwaysFails struct{ server.Ping }

func (*alwaysFails) UnaryCall(context.Context, *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	return nil, status.Error(codes.PermissionDenied, "no")
}

func TestErrorsCountedByCode(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, &flaky{})
	spec := shortSpec(testutil.Serve(t, s))
	spec.Conns = []ConnMode{{Kind: Shared}}
	spec.Inflight = []int{2}
	rec, err := RunStep(testutil.Context(t), spec, spec.Steps()[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Half the RPCs fail, far above MaxErrorShare: the step is failed,
	// and its figures are kept (issue 16).
	if rec.Status != result.StatusFailed || !strings.Contains(rec.Error, "ResourceExhausted") || rec.ThroughputRPS <= 0 {
		t.Errorf("status %q (%s), throughput %v; want failed naming ResourceExhausted, figures kept", rec.Status, rec.Error, rec.ThroughputRPS)
	}
	if want := "ResourceExhausted: every other call fails"; rec.ErrorSample != want || !strings.HasSuffix(rec.Error, "; first: "+want) {
		t.Errorf("got error %q, sample %q; want the sample %q in both", rec.Error, rec.ErrorSample, want)
	}
	nerr := rec.Errors["ResourceExhausted"]
	if nerr == 0 || len(rec.Errors) != 1 {
		t.Errorf("errors %v, want only ResourceExhausted", rec.Errors)
	}
	// Successes and failures alternate: about half each.
	if ok := rec.Requests - nerr; ok < nerr/2 || ok > nerr*2 {
		t.Errorf("%d ok vs %d failed, want about half each", ok, nerr)
	}
}

func TestEveryRPCFailingMarksStepFailed(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, &alwaysFails{})
	spec := shortSpec(testutil.Serve(t, s))
	spec.Conns = []ConnMode{{Kind: Shared}}
	err := Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error {
		if r.Status != result.StatusFailed || r.Errors["PermissionDenied"] == 0 {
			t.Errorf("got status %q errors %v, want failed with PermissionDenied", r.Status, r.Errors)
		}
		// The error names the code and the server's message (issue 16:
		// "every RPC failed (5542)" said neither).
		if want := fmt.Sprintf("every RPC failed (%d): PermissionDenied: no", r.Requests); r.Error != want || r.ErrorSample != "PermissionDenied: no" {
			t.Errorf("got error %q, sample %q; want %q, sample %q", r.Error, r.ErrorSample, want, "PermissionDenied: no")
		}
		return nil
	}, nil)
	if err == nil {
		t.Error("Sweep = nil error, want one for the failed step")
	}
}

func TestUnreachableTargetFailsFastAndSkipsTheRest(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := lis.Addr().String()
	lis.Close() // nothing listens there now
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: Shared}, {Kind: PerWorker}}
	spec.Inflight = []int{1, 2}
	spec.DialTimeout = 500 * time.Millisecond
	var recs []*result.Record
	start := time.Now()
	err = Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error { recs = append(recs, r); return nil }, nil)
	if err == nil {
		t.Fatal("Sweep = nil error, want an error")
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want one per step (4)", len(recs))
	}
	for i, r := range recs {
		if r.Status != result.StatusFailed || r.Error == "" {
			t.Errorf("record %d: status %q error %q, want failed with a reason", i, r.Status, r.Error)
		}
	}
	// Only the first step waits for the dial timeout; the rest are skipped.
	if d := time.Since(start); d > 4*spec.DialTimeout+5*time.Second {
		t.Errorf("sweep took %v; steps after the first unreachable one should not wait", d)
	}
}

// TestServerDiesMidSweep stops the server during the first step: that step
// records Unavailable errors, the next reports the failure, and Sweep
// returns an error after handing over every record.
func TestServerDiesMidSweep(t *testing.T) {
	// The server stops itself once the first step has measured RPCs.
	var s *grpc.Server
	var stopping atomic.Bool
	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if strings.Contains(info.FullMethod, "UsageService") && stopping.CompareAndSwap(false, true) {
			go s.Stop() // the interval's first read: it begins now
		}
		return h(ctx, req)
	}
	s = server.New(server.Options{}, grpc.ChainUnaryInterceptor(count))
	target := testutil.Serve(t, s)
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: Shared}}
	spec.Inflight = []int{2, 4}
	spec.Interval = time.Second
	spec.DialTimeout = 500 * time.Millisecond
	var recs []*result.Record
	err := Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error { recs = append(recs, r); return nil }, nil)
	if err == nil {
		t.Fatal("Sweep = nil error, want an error")
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	if recs[0].Errors["Unavailable"] == 0 {
		t.Errorf("step 1 errors %v, want Unavailable counted", recs[0].Errors)
	}
	if recs[1].Status != result.StatusFailed || recs[1].Error == "" {
		t.Errorf("step 2: status %q error %q, want failed", recs[1].Status, recs[1].Error)
	}
}

func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.Context(t))
	target := measuredServer(t, 100, cancel)
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: Shared}}
	spec.Inflight = []int{1, 2}
	spec.Interval = time.Minute // cut short by the cancel, well before
	var recs []*result.Record
	err := Sweep(ctx, spec, Options{}, func(r *result.Record) error { recs = append(recs, r); return nil }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Sweep = %v, want context.Canceled", err)
	}
	if len(recs) != 1 || recs[0].Status != result.StatusInterrupted || recs[0].Requests == 0 {
		t.Fatalf("got %d records (%+v), want one interrupted record with requests", len(recs), recs)
	}
	if d := time.Duration(recs[0].DurationNS); d >= spec.Interval || d <= 0 {
		t.Errorf("duration %v, want the part of the interval that ran", d)
	}
	if len(recs[0].Errors) != 0 {
		t.Errorf("errors %v: RPCs cut by the interrupt must not count as errors", recs[0].Errors)
	}
}

// failEvery serves rpclab's ping and fails with Unavailable the pings
// answered after the step's CPU read (UsageService, which begins its
// interval: see measuredServer) whose count i has i%every == at. Counted
// from that event, not over the whole run, the share of failures the step
// records is about 1/every however few RPCs a busy machine makes: at most
// the step's in-flight count of those pings ends in the warm-up or after
// the interval.
func failEvery(t *testing.T, every, at int64) string {
	t.Helper()
	var read atomic.Bool
	var pings atomic.Int64
	fail := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if strings.Contains(info.FullMethod, "UsageService") {
			resp, err := h(ctx, req)
			read.Store(true)
			return resp, err
		}
		if read.Load() && pings.Add(1)%every == at {
			return nil, status.Error(codes.Unavailable, "one in n fails")
		}
		return h(ctx, req)
	}
	return testutil.Serve(t, server.New(server.Options{}, grpc.ChainUnaryInterceptor(fail)))
}

// TestErrorShareFailsStep: a step may lose MaxErrorShare of its RPCs and
// stay ok; above that it is failed, with its figures kept, so it enters no
// verdict as a clean step (issue 16: a step whose server was killed was
// written "ok" with Unavailable=109315). The ok case fails each 200th ping
// from the 200th (of N pings, at most N/200 fail: 0.5%); the failed case
// each 50th from the 5th (the first failure past the 4 pings in flight
// when the interval begins: at least one failure, and 2% of many).
func TestErrorShareFailsStep(t *testing.T) {
	tests := []struct {
		every, at  int64
		wantStatus string
	}{
		{every: 200, at: 0, wantStatus: result.StatusOK},
		{every: 50, at: 5, wantStatus: result.StatusFailed},
	}
	for _, tc := range tests {
		spec := shortSpec(failEvery(t, tc.every, tc.at))
		spec.Conns = []ConnMode{{Kind: Shared}}
		spec.Inflight = []int{4}
		spec.Interval = 2 * time.Second // usually hundreds of RPCs, so the ok case loses some
		rec, err := RunStep(testutil.Context(t), spec, spec.Steps()[0], Options{})
		if err != nil {
			t.Fatal(err)
		}
		share := float64(rec.Errors["Unavailable"]) / float64(rec.Requests)
		t.Logf("one in %d: %d of %d failed (%.2f%%): %s %s", tc.every, rec.Errors["Unavailable"], rec.Requests, 100*share, rec.Status, rec.Error)
		if rec.Status != tc.wantStatus || rec.ThroughputRPS <= 0 {
			t.Errorf("one in %d failing: got status %q (%s), throughput %v; want %q with figures", tc.every, rec.Status, rec.Error, rec.ThroughputRPS, tc.wantStatus)
		}
		if tc.wantStatus == result.StatusFailed && !strings.Contains(rec.Error, "Unavailable") {
			t.Errorf("got error %q, want it to name the code", rec.Error)
		}
	}
}

var errServerDied = errors.New("the server exited with signal: killed")

// TestSweepStopsOnCause: cancelling the sweep's context with a cause (a
// dead server, as the lab sees it) ends the running step at once as
// failed with that cause, and Sweep returns the cause.
func TestSweepStopsOnCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(testutil.Context(t))
	defer cancel(nil)
	target := measuredServer(t, 100, func() { cancel(errServerDied) })
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: Shared}}
	spec.Inflight = []int{1, 2}
	// Stopped by the cause well before its end: a step that waited for
	// its interval would outlast the test's deadline.
	spec.Interval = time.Minute
	var recs []*result.Record
	err := Sweep(ctx, spec, Options{}, func(r *result.Record) error { recs = append(recs, r); return nil }, nil)
	if !errors.Is(err, errServerDied) {
		t.Fatalf("Sweep = %v, want the cause", err)
	}
	if len(recs) != 1 || recs[0].Status != result.StatusFailed || !strings.Contains(recs[0].Error, errServerDied.Error()) || recs[0].Requests == 0 {
		t.Fatalf("got %d records (%+v), want one failed record naming the cause, with what it measured", len(recs), recs)
	}
}

// measuredServer serves rpclab's ping and calls then, once, when a step
// has measured RPCs: the step's client reads the server's CPU
// (UsageService) just before its interval begins, which it begins as
// soon as that read's reply arrives; of k pings answered after the read,
// k far above the step's in-flight count, the later ones are in the
// interval (a closed-loop caller sends after each reply). An event on
// the server, no clock.
func measuredServer(t *testing.T, k int64, then func()) string {
	t.Helper()
	var read atomic.Bool
	var pings atomic.Int64
	var once atomic.Bool
	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		switch {
		case strings.Contains(info.FullMethod, "UsageService"):
			read.Store(true)
		case read.Load() && pings.Add(1) == k && once.CompareAndSwap(false, true):
			go then()
		}
		return resp, err
	}
	return testutil.Serve(t, server.New(server.Options{}, grpc.ChainUnaryInterceptor(count)))
}
