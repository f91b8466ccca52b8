// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

func sweepSpec(target string, inflight ...int) *loadgen.Spec {
	return &loadgen.Spec{
		Target:      target,
		Conns:       []loadgen.ConnMode{{Kind: loadgen.Shared}},
		RPCs:        []string{loadgen.Unary},
		Inflight:    inflight,
		Warmup:      50 * time.Millisecond,
		Interval:    300 * time.Millisecond,
		DialTimeout: 5 * time.Second,
	}
}

func collect(recs *[]*result.Record) func(*result.Record) error {
	return func(r *result.Record) error { *recs = append(*recs, r); return nil }
}

// checkMerged checks rec's figures are its workers' merged: requests and
// errors summed, the histogram the exact merge of theirs.
func checkMerged(t *testing.T, rec *result.Record) {
	t.Helper()
	all := stats.Merge().Hist
	var requests int64
	for _, w := range rec.Workers {
		if w.Status != "ok" {
			continue
		}
		requests += w.Requests
		h, err := stats.DecodeHistogram(w.HistogramHDR)
		if err != nil {
			t.Fatalf("%s: %v", w.Addr, err)
		}
		ok := w.Requests
		for _, n := range w.Errors {
			ok -= n
		}
		if h.TotalCount() == 0 || h.TotalCount() != ok {
			t.Errorf("%s: histogram holds %d, want its %d successful RPCs (more than 0)", w.Addr, h.TotalCount(), ok)
		}
		all.Merge(h)
	}
	got, err := stats.DecodeHistogram(rec.HistogramHDR)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requests != requests || got.TotalCount() != all.TotalCount() || !slices.Equal(got.Export().Counts, all.Export().Counts) {
		t.Errorf("merged: got %d requests, histogram of %d; want the workers' sum %d and the merge of theirs (%d)", rec.Requests, got.TotalCount(), requests, all.TotalCount())
	}
	if rec.Latency != stats.Quantiles(all) {
		t.Errorf("merged latency: got %+v, want %+v", rec.Latency, stats.Quantiles(all))
	}
}

// TestSweepOnTwoWorkers runs a two-step sweep on two rpclab workers: the
// in-flight count is split (3 = 2 + 1, 1 = 1 + idle), each record merges
// the workers' figures exactly, CPU is summed, and each worker's share is
// kept; progress is told each step's start and, with its record, its end.
func TestSweepOnTwoWorkers(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, _ := startPing(t)
	remotes := twoWorkers(t, ctx)
	var recs []*result.Record
	var events []loadgen.Event
	prog := loadgen.Progress(func(e loadgen.Event) { events = append(events, e) })
	if err := Sweep(ctx, remotes, sweepSpec(target, 3, 1), collect(&recs), prog); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	if len(events) != 4 {
		t.Fatalf("got %d progress events, want 4 (a start and an end per step)", len(events))
	}
	for i, e := range events {
		want := loadgen.Event{Kind: loadgen.StepStarted, I: i / 2, N: 2, Step: e.Step}
		if i%2 == 1 {
			want.Kind, want.Record = loadgen.StepEnded, recs[i/2]
		}
		if e != want || e.Step.Inflight != []int{3, 1}[i/2] {
			t.Errorf("event %d: got %+v, want %+v at in-flight %d", i, e, want, []int{3, 1}[i/2])
		}
	}
	for i, tc := range []struct {
		shares []int
		status []string
	}{{[]int{2, 1}, []string{"ok", "ok"}}, {[]int{1, 0}, []string{"ok", "idle"}}} {
		rec := recs[i]
		if rec.Status != result.StatusOK || len(rec.Workers) != 2 {
			t.Fatalf("step %d: got status %s (%s) with %d workers, want ok with 2", i+1, rec.Status, rec.Error, len(rec.Workers))
		}
		var cpu int64
		var rps float64
		for j, w := range rec.Workers {
			if w.Inflight != tc.shares[j] || w.Status != tc.status[j] || w.Impl != "rpclab" {
				t.Errorf("step %d worker %d: got share %d, status %s, impl %s; want %d, %s, rpclab", i+1, j, w.Inflight, w.Status, w.Impl, tc.shares[j], tc.status[j])
			}
			cpu += w.CPUNS
			rps += w.ThroughputRPS
			if h := w.HostCPU; runtime.GOOS == "linux" && w.Status == "ok" && (h == nil || len(h.CPUs) == 0 || h.BusyNS <= 0) {
				t.Errorf("step %d worker %d: got host_cpu %+v, want its host's CPU over the interval", i+1, j, h)
			}
		}
		if rec.ClientCPUNS != cpu || rec.ClientCPUNS <= 0 || rec.ThroughputRPS != rps || rec.Spec.Inflight != tc.shares[0]+tc.shares[1] {
			t.Errorf("step %d: got cpu %d, throughput %v, inflight %d; want the workers' sums %d, %v, %d", i+1, rec.ClientCPUNS, rec.ThroughputRPS, rec.Spec.Inflight, cpu, rps, tc.shares[0]+tc.shares[1])
		}
		if rec.WorkersStartNS <= 0 {
			t.Errorf("step %d: got workers_start_ns %d, want it measured", i+1, rec.WorkersStartNS)
		}
		checkMerged(t, rec)
	}
}

// TestSweepOfficialAndRPCLabWorker: one step on grpc-go's own worker and
// an rpclab worker; the official worker's buckets are converted (their
// error stated), and the record is the merge of both.
func TestSweepOfficialAndRPCLabWorker(t *testing.T) {
	ctx := testutil.LongContext(t)
	off := startOfficial(t, ctx)
	rl, _ := startWorker(t)
	target, _ := startPing(t)
	remotes, err := Connect(ctx, []string{off, rl}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	spec := sweepSpec(target, 4)
	spec.Conns = []loadgen.ConnMode{{Kind: loadgen.Pooled, N: 2}}
	var recs []*result.Record
	if err := Sweep(ctx, remotes, spec, collect(&recs), nil); err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	o, r := rec.Workers[0], rec.Workers[1]
	if o.Impl != "official" || o.HistogramRelError != 0.005 || o.ConnsObserved != -1 || r.Impl != "rpclab" || r.HistogramRelError != 0 || r.ConnsObserved != 2 {
		t.Errorf("got %s (rel error %v, conns %d) and %s (rel error %v, conns %d); want official (0.005, -1) and rpclab (0, 2)",
			o.Impl, o.HistogramRelError, o.ConnsObserved, r.Impl, r.HistogramRelError, r.ConnsObserved)
	}
	if rec.ConnsObserved != -1 || loadgen.ConnModeOf(rec.Spec) != spec.Conns[0] {
		t.Errorf("got conns observed %d, layout %v; want -1 (an official worker cannot count) and %v", rec.ConnsObserved, loadgen.ConnModeOf(rec.Spec), spec.Conns[0])
	}
	checkMerged(t, rec)

	// The open loop: Poisson at 200/s, 100/s each, the official worker
	// told by load_params alone; the counts are at most about the rate (a
	// closed loop would make thousands; a busy machine may leave an open
	// loop below its rate, never far above it). In-flight
	// 1 each: grpc-go's worker sends offered_load from each of its
	// channels x outstanding goroutines (benchmark_client.go's unaryLoop),
	// not from the worker as a whole, so only a share of 1 means the same
	// to it as to the protocol (docs/workers.md).
	spec = sweepSpec(target, 2)
	spec.Warmup, spec.Interval = 300*time.Millisecond, 500*time.Millisecond
	recs = nil
	if err := SweepOpen(ctx, remotes, spec, Open{Rates: []float64{200}, Arrival: loadgen.Poisson}, collect(&recs), nil); err != nil {
		t.Fatal(err)
	}
	rec = recs[0]
	if rec.Spec.LoadModel != "open" || rec.Spec.RateRPS != 200 || rec.Spec.Arrival != loadgen.Poisson {
		t.Errorf("open: got load_model %q, rate_rps %v, arrival %q; want open, 200, poisson", rec.Spec.LoadModel, rec.Spec.RateRPS, rec.Spec.Arrival)
	}
	for _, w := range rec.Workers {
		want := w.RateRPS * time.Duration(w.DurationNS).Seconds()
		if w.RateRPS != 100 || w.Requests <= 0 || float64(w.Requests) > 1.5*want {
			t.Errorf("open: %s (%s): got rate_rps %v, %d requests; want 100, more than 0 and at most 150%% of %.0f", w.Addr, w.Impl, w.RateRPS, w.Requests, want)
		}
	}
	checkMerged(t, rec)
}

// TestToHDR: a bucket histogram converts with every count kept, each
// value within half a bucket of where it was, min and max kept.
func TestToHDR(t *testing.T) {
	g := benchwire.Geometry{Resolution: 0.01, MaxPossible: 60e9}
	d := &pb.HistogramData{Bucket: make([]uint32, g.Buckets()), MinSeen: 1003, MaxSeen: 2_000_000, Count: 6}
	d.Bucket[g.BucketOf(1003)] = 3
	d.Bucket[g.BucketOf(50_000)] = 2
	d.Bucket[g.BucketOf(2_000_000)] = 1
	h, rel := g.ToHDR(d)
	if h.TotalCount() != 6 || rel != 0.005 {
		t.Fatalf("got %d values and error %v, want 6 and 0.005", h.TotalCount(), rel)
	}
	if h.Min() != 1003 || !h.ValuesAreEquivalent(h.Max(), 2_000_000) {
		t.Errorf("got min %d, max %d; want 1003 and 2000000", h.Min(), h.Max())
	}
	if p := float64(h.ValueAtQuantile(70)); math.Abs(p-50_000)/50_000 > 0.005+0.001 {
		t.Errorf("got p70 %v, want 50000 within half a bucket", p)
	}
}

// TestSweepWorkerLostMidStep: a worker dies during the first step; that
// step is kept with the survivor's figures, marked partial; the second
// step runs on the survivor (partial again); Sweep returns an error.
func TestSweepWorkerLostMidStep(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, _ := startPing(t)
	a, _, aMarks, _ := startWatchedWorker(t)
	b, _, kill := startKillableWorker(t)
	remotes, err := Connect(ctx, []string{a, b}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	spec := sweepSpec(target, 2, 2)
	// b dies once a took the mark that began the first step's interval:
	// mid-step, with a measuring.
	started := func(e loadgen.Event) {
		if e.Kind == loadgen.StepStarted && e.I == 0 {
			go func() { waitUntil(ctx, func() bool { return aMarks() > 0 }); kill() }()
		}
	}
	var recs []*result.Record
	err = Sweep(ctx, remotes, spec, collect(&recs), started)
	if err == nil || !strings.Contains(err.Error(), "2 of 2 steps") {
		t.Errorf("got %v, want an error counting 2 of 2 steps", err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2 (the sweep goes on)", len(recs))
	}
	for i, rec := range recs {
		if rec.Status != result.StatusFailed || !rec.Partial || !strings.Contains(rec.Error, b) || rec.Workers[1].Status != "lost" || rec.Workers[0].Status != "ok" || rec.Requests != rec.Workers[0].Requests || rec.Requests == 0 {
			t.Errorf("step %d: got status %s, partial %v, error %q, workers %s/%s, requests %d; want failed, partial, naming %s, ok/lost, the survivor's %d",
				i+1, rec.Status, rec.Partial, rec.Error, rec.Workers[0].Status, rec.Workers[1].Status, rec.Requests, b, rec.Workers[0].Requests)
		}
	}
}

// TestSweepStopped: ctx ending during the interval keeps the step's
// record (interrupted, with what was measured), ends every worker's run
// (each is free again at once) and runs no further step.
func TestSweepStopped(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, served := startPing(t)
	a, _, aMarks, _ := startWatchedWorker(t)
	b, _, bMarks, _ := startWatchedWorker(t)
	remotes, err := Connect(ctx, []string{a, b}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const inflight = 2
	spec := sweepSpec(target, inflight, inflight)
	spec.Interval = time.Minute
	sctx, cancel := context.WithCancel(ctx)
	// Stop once the step has measured RPCs: both workers took the mark
	// that began its interval, then the server answered more than
	// inflight+1 RPCs, so some caller made two since, and the first ended
	// at the client (a closed loop sends after each reply) in the interval.
	started := func(e loadgen.Event) {
		if e.Kind != loadgen.StepStarted {
			return
		}
		go func() {
			waitUntil(ctx, func() bool { return aMarks() > 0 && bMarks() > 0 })
			since := served.Load()
			waitUntil(ctx, func() bool { return served.Load() > since+inflight+1 })
			cancel()
		}()
	}
	var recs []*result.Record
	err = Sweep(sctx, remotes, spec, collect(&recs), started)
	if !errors.Is(err, context.Canceled) || len(recs) != 1 {
		t.Fatalf("got %v and %d records, want context.Canceled and 1", err, len(recs))
	}
	if rec := recs[0]; rec.Status != result.StatusInterrupted || rec.Requests == 0 {
		t.Errorf("got status %s with %d requests (%s; workers %+v), want interrupted with what was measured", rec.Status, rec.Requests, rec.Error, rec.Workers)
	}
	for _, r := range remotes {
		run, err := r.StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 1))
		if err != nil {
			t.Fatalf("%s after the stop: %v (its run was not ended)", r.Addr, err)
		}
		run.Close(ctx)
	}
}

// TestConnectUnreachable: one unreachable worker among reachable ones is
// an error naming it, and nothing is run.
func TestConnectUnreachable(t *testing.T) {
	ctx := testutil.LongContext(t)
	a, _ := startWorker(t)
	dead := closedAddr(t)
	_, err := Connect(ctx, []string{a, dead}, 300*time.Millisecond)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), dead) || strings.Contains(err.Error(), a) {
		t.Errorf("got %v, want ErrUnreachable naming %s only", err, dead)
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		inflight, n int
		want        []int
	}{{8, 2, []int{4, 4}}, {7, 2, []int{4, 3}}, {10, 4, []int{3, 3, 2, 2}}, {1, 3, []int{1, 0, 0}}} {
		if got := Split(tc.inflight, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%d, %d): got %v, want %v", tc.inflight, tc.n, got, tc.want)
		}
	}
}

// TestClientConfigLayouts: each layout as client_channels x outstanding
// for any worker, and a pool on an official worker only when it divides.
func TestClientConfigLayouts(t *testing.T) {
	spec := sweepSpec("127.0.0.1:1", 1)
	for _, tc := range []struct {
		conn    string
		share   int
		rpclab  bool
		ch, out int32
		wantErr bool
	}{
		{"shared", 6, false, 1, 6, false},
		{"per-worker", 6, false, 6, 1, false},
		{"pool:3", 6, false, 3, 2, false},
		{"pool:4", 6, false, 0, 0, true},
		{"pool:4", 6, true, 1, 6, false},
	} {
		m, err := loadgen.ParseConnMode(tc.conn)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientConfig(spec, loadgen.Step{Conn: m, RPC: loadgen.Unary, Inflight: tc.share}, tc.share, tc.rpclab)
		if tc.wantErr {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("%s share %d official: got %v, want ErrConfig", tc.conn, tc.share, err)
			}
			continue
		}
		if err != nil || cfg.GetClientChannels() != tc.ch || cfg.GetOutstandingRpcsPerChannel() != tc.out || cfg.GetChannelArgs()[0].GetStrValue() != tc.conn {
			t.Errorf("%s share %d: got %d x %d (%v), want %d x %d with rpclab.conn=%s", tc.conn, tc.share, cfg.GetClientChannels(), cfg.GetOutstandingRpcsPerChannel(), err, tc.ch, tc.out, tc.conn)
		}
	}
}

// TestSweepStoppedInWarmup: a stop during the warm-up keeps a record that
// says nothing was measured (the warm-up's RPCs are not counted).
func TestSweepStoppedInWarmup(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, served := startPing(t)
	a, _ := startWorker(t)
	remotes, err := Connect(ctx, []string{a}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	spec := sweepSpec(target, 2)
	spec.Warmup = time.Minute
	sctx, cancel := context.WithCancel(ctx)
	started := func(e loadgen.Event) {
		if e.Kind != loadgen.StepStarted {
			return
		}
		go func() {
			waitUntil(ctx, func() bool { return served.Load() >= 100 })
			cancel()
		}()
	}
	var recs []*result.Record
	if err := Sweep(sctx, remotes, spec, collect(&recs), started); !errors.Is(err, context.Canceled) || len(recs) != 1 {
		t.Fatalf("got %v and %d records, want context.Canceled and 1", err, len(recs))
	}
	if rec := recs[0]; rec.Status != result.StatusInterrupted || rec.Requests != 0 || !strings.Contains(rec.Error, "warm-up") {
		t.Errorf("got %s with %d requests (%q), want interrupted in the warm-up with none counted", rec.Status, rec.Requests, rec.Error)
	}
}

// TestMergeFlagsBusyWorker: a worker whose CPU time over its interval
// and cores is above BusyLimit is flagged as the generator being the
// limit; CPU is summed; an official worker's buckets are counted as OK.
func TestMergeFlagsBusyWorker(t *testing.T) {
	g := benchwire.Geometry{Resolution: benchwire.DefaultResolution, MaxPossible: benchwire.DefaultMaxPossible}
	stat := func(user float64) *pb.ClientStats {
		d := &pb.HistogramData{Bucket: make([]uint32, g.Buckets()), MinSeen: 1000, MaxSeen: 1000, Count: 10}
		d.Bucket[g.BucketOf(1000)] = 10
		return &pb.ClientStats{Latencies: d, TimeElapsed: 1, TimeUser: user}
	}
	parts := []*part{
		{r: &Remote{Addr: "busy:1", Cores: 2}, share: 1, stats: stat(1.7)},
		{r: &Remote{Addr: "calm:1", Cores: 2}, share: 1, stats: stat(1.5)},
	}
	rec := newRecord(sweepSpec("127.0.0.1:1", 2), loadgen.Step{Conn: loadgen.ConnMode{Kind: loadgen.Shared}, RPC: loadgen.Unary, Inflight: 2})
	merge(rec, parts, loadgen.Step{Conn: loadgen.ConnMode{Kind: loadgen.Shared}, Inflight: 2})
	b, c := rec.Workers[0], rec.Workers[1]
	if !b.GeneratorLimited || c.GeneratorLimited || math.Abs(b.CPUBusy-0.85) > 1e-9 || math.Abs(c.CPUBusy-0.75) > 1e-9 {
		t.Errorf("got busy %v (flagged %v) and %v (flagged %v), want 0.85 flagged and 0.75 not", b.CPUBusy, b.GeneratorLimited, c.CPUBusy, c.GeneratorLimited)
	}
	if rec.ClientCPUNS != int64(3.2e9) || rec.Requests != 20 || rec.Errors["OK"] != 0 {
		t.Errorf("got cpu %d, requests %d, errors %v; want 3.2e9, 20, none", rec.ClientCPUNS, rec.Requests, rec.Errors)
	}
}

// TestSweepOpenOnTwoWorkers runs an open-loop sweep at 200 RPCs per second
// on two rpclab workers, at in-flight 3 (both workers send, 100/s each)
// and 1 (the second worker is idle, the first sends all 200/s): each
// record is an open-loop record, merged as a closed one is, each worker's
// rate is stated, and the counts are at most about rate x interval (the
// interval is each worker's own, from mark to mark, which under -race runs
// well past spec.Interval; a busy machine may leave an open loop below its
// rate, never far above it, where a closed loop would be).
func TestSweepOpenOnTwoWorkers(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, _ := startPing(t)
	remotes := twoWorkers(t, ctx)
	spec := sweepSpec(target, 3, 1)
	// The warm-up absorbs the start's lag (under -race the first RPCs are
	// slow, and the late sends would go out inside a shorter warm-up's
	// interval, as an open loop catches up).
	spec.Warmup, spec.Interval = 300*time.Millisecond, 500*time.Millisecond
	var recs []*result.Record
	if err := SweepOpen(ctx, remotes, spec, Open{Rates: []float64{200}, Arrival: loadgen.Constant}, collect(&recs), nil); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for i, wantRates := range [][]float64{{100, 100}, {200, 0}} {
		rec := recs[i]
		if rec.Status != result.StatusOK || len(rec.Workers) != 2 {
			t.Fatalf("step %d: got status %s (%s) with %d workers, want ok with 2", i+1, rec.Status, rec.Error, len(rec.Workers))
		}
		if rec.Spec.LoadModel != "open" || rec.Spec.RateRPS != 200 || rec.Spec.Arrival != loadgen.Constant {
			t.Errorf("step %d: got load_model %q, rate_rps %v, arrival %q; want open, 200, constant", i+1, rec.Spec.LoadModel, rec.Spec.RateRPS, rec.Spec.Arrival)
		}
		var wantAll float64
		for j, w := range rec.Workers {
			if w.RateRPS != wantRates[j] {
				t.Errorf("step %d worker %d: got rate_rps %v, want %v", i+1, j, w.RateRPS, wantRates[j])
			}
			d := time.Duration(w.DurationNS)
			if want := wantRates[j] * d.Seconds(); float64(w.Requests) > 1.5*want || want > 0 && w.Requests <= 0 {
				t.Errorf("step %d worker %d: got %d requests, want more than 0 and at most 150%% of %.0f (%v/s over %v)", i+1, j, w.Requests, want, wantRates[j], d)
			}
			wantAll += wantRates[j] * d.Seconds()
		}
		if float64(rec.Requests) > 1.5*wantAll {
			t.Errorf("step %d: got %d requests, want at most 150%% of %.0f (200/s over the workers' intervals)", i+1, rec.Requests, wantAll)
		}
		checkMerged(t, rec)
	}
}

// TestOpenValidate: a rate must be positive, and constant arrivals need
// every worker to be rpclab's (an official worker's open loop is Poisson).
func TestOpenValidate(t *testing.T) {
	rl, off := &Remote{Addr: "a:1", RPCLab: true}, &Remote{Addr: "b:1"}
	for _, tc := range []struct {
		name    string
		open    Open
		remotes []*Remote
		want    error
	}{
		{"constant on rpclab", Open{Rates: []float64{100}, Arrival: loadgen.Constant}, []*Remote{rl}, nil},
		{"poisson on official", Open{Rates: []float64{100}, Arrival: loadgen.Poisson}, []*Remote{rl, off}, nil},
		{"constant on official", Open{Rates: []float64{100}, Arrival: loadgen.Constant}, []*Remote{rl, off}, loadgen.ErrArrival},
		{"zero rate", Open{Rates: []float64{0}, Arrival: loadgen.Poisson}, []*Remote{rl}, loadgen.ErrRate},
		{"unknown arrival", Open{Rates: []float64{100}, Arrival: "uniform"}, []*Remote{rl}, loadgen.ErrArrival},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open.Validate(tc.remotes)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestOpenLoopConfig: an open-loop share is the protocol's Poisson
// load_params at the worker's rate; rpclab's workers also get
// rpclab.arrival, official ones do not.
func TestOpenLoopConfig(t *testing.T) {
	for _, rpclab := range []bool{true, false} {
		cfg := testutil.ClosedLoopConfig("127.0.0.1:1", 1, 4)
		openLoop(cfg, 150, loadgen.Constant, rpclab)
		if got := cfg.GetLoadParams().GetPoisson().GetOfferedLoad(); got != 150 {
			t.Errorf("rpclab %v: got offered_load %v, want 150", rpclab, got)
		}
		var arrival string
		for _, a := range cfg.GetChannelArgs() {
			if a.GetName() == benchwire.ArgArrival {
				arrival = a.GetStrValue()
			}
		}
		if want := map[bool]string{true: loadgen.Constant}[rpclab]; arrival != want {
			t.Errorf("rpclab %v: got %s=%q, want %q", rpclab, benchwire.ArgArrival, arrival, want)
		}
	}
	cfg := testutil.ClosedLoopConfig("127.0.0.1:1", 1, 4)
	openLoop(cfg, 0, loadgen.Constant, true)
	if cfg.GetLoadParams().GetClosedLoop() == nil || len(cfg.GetChannelArgs()) != 0 {
		t.Errorf("rate 0: got %v, %v; want the closed loop unchanged", cfg.GetLoadParams(), cfg.GetChannelArgs())
	}
}

// twoWorkers starts two rpclab workers on loopback and connects to them.
func twoWorkers(t *testing.T, ctx context.Context) []*Remote {
	t.Helper()
	a, _ := startWorker(t)
	b, _ := startWorker(t)
	remotes, err := Connect(ctx, []string{a, b}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return remotes
}

// TestControlTimeout: a worker that does not answer a mark within its
// Remote.ControlTimeout is lost for the step, the error saying so; zero
// means DefaultControlTimeout.
func TestControlTimeout(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{
		{0, DefaultControlTimeout},
		{time.Minute, time.Minute},
	} {
		if got := (&Remote{ControlTimeout: tc.set}).controlTimeout(); got != tc.want {
			t.Errorf("ControlTimeout %v: got %v, want %v", tc.set, got, tc.want)
		}
	}
	ctx := testutil.LongContext(t)
	target, _ := startPing(t)
	addr, _ := startWorker(t)
	r := dial(t, ctx, addr)
	r.ControlTimeout = time.Nanosecond // past before any worker can answer
	rec := RunStep(ctx, []*Remote{r}, sweepSpec(target, 1), sweepSpec(target, 1).Steps()[0])
	if rec.Status != result.StatusFailed || len(rec.Workers) != 1 || rec.Workers[0].Status != "lost" ||
		!strings.Contains(rec.Workers[0].Error, context.DeadlineExceeded.Error()) {
		t.Errorf("got status %q, workers %+v; want failed with the worker lost past its deadline", rec.Status, rec.Workers)
	}
}
