// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/verdict"
	"github.com/rpclab/rpclab/pool/adaptive"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// quickRule is adaptive.DefaultRule on a short clock (it decides every 10 ms
// and settles, cools down and shrinks within tens of ms), so that the
// adaptive pool's steps, which warm up until the pool can settle, take
// milliseconds here rather than doctor's real tens of seconds.
func quickRule() *adaptive.Rule {
	r := adaptive.DefaultRule(1, 1) // doctor sets Min and Max
	r.Interval, r.Trial, r.Cooldown, r.IdleFor = 10*time.Millisecond, 40*time.Millisecond, 30*time.Millisecond, 60*time.Millisecond
	return &r
}

func startServer(t *testing.T) string {
	t.Helper()
	return testutil.Serve(t, server.New(server.Options{}))
}

// TestDoctorSharedUnderCap: against rpclab's server with a rate cap every
// layout reaches the cap, so a pool gains nothing: the verdict must be that
// the shared connection is not the bottleneck, and no step may exceed the
// rate or in-flight cap.
func TestDoctorSharedUnderCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	const maxRPS, maxInflight = 400, 4
	o := doctor.DefaultOptions(startServer(t))
	o.Budget, o.MaxRPS, o.MaxInflight, o.Pools = 6*time.Second, maxRPS, maxInflight, []int{2}
	o.Warmup, o.Interval = 100*time.Millisecond, 400*time.Millisecond
	o.Load.AdaptiveRule = quickRule()
	d, err := doctor.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var auto *result.Record
	layouts := map[string]bool{}
	for i := range d.Records {
		layouts[verdict.ConnLabel(&d.Records[i])] = true
		if d.Records[i].Spec.ConnMode == verdict.AutoPoolMode {
			auto = &d.Records[i]
		}
	}
	if !layouts["shared"] || !layouts["pool:2"] || !layouts["pool:auto:1:2"] {
		t.Fatalf("got layouts %v, want shared, pool:2 and pool:auto:1:2", layouts)
	}
	if ps := auto.PoolSizes; len(ps) == 0 || ps[0].Size < 1 || ps[0].Size > 2 {
		t.Errorf("got pool_sizes %+v for the adaptive pool, want its sizes within 1..2", ps)
	}
	if len(d.Verdicts) != 1 || d.Verdicts[0].Kind == verdict.ConnBottleneck {
		t.Errorf("got %s, want one verdict, not a connection bottleneck", verdict.Text(d.Verdicts))
	}
	if !d.Capped {
		t.Errorf("got Capped false, want true (the rate cap stopped the layouts)")
	}
	for _, r := range d.Records {
		if r.Spec.Inflight > maxInflight {
			t.Errorf("got a step at in-flight %d, want at most %d", r.Spec.Inflight, maxInflight)
		}
		// The cap paces each caller from its start, in the warm-up, and
		// a caller the machine held back catches up: the interval may
		// carry the warm-up's calls (it did, 490 req/s beside two CPU
		// hogs), never more than the cap over warm-up and interval, plus
		// each caller's first call, which is not held back.
		if bound := maxRPS*(o.Warmup+time.Duration(r.DurationNS)).Seconds() + maxInflight; float64(r.Requests) > bound {
			t.Errorf("got %d requests (%.0f req/s) at %s in-flight %d, want at most %.0f (%d req/s over the warm-up and the interval)", r.Requests, r.ThroughputRPS, r.Spec.ConnMode, r.Spec.Inflight, bound, maxRPS)
		}
		if r.Status != result.StatusOK || r.Spec.LoadModel != "closed" {
			t.Errorf("got status %q load model %q, want ok closed", r.Status, r.Spec.LoadModel)
		}
	}
	var out bytes.Buffer
	report.DoctorText(&out, d.Records, d.Notes)
	for _, want := range []string{"shared", "pool:2", "Verdict:\n" + verdict.Text(d.Verdicts), "Note: a cap of the study (at most 400 RPCs/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verdict lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDoctorBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	bidi, err := dyncall.Find(protoregistry.GlobalFiles, "grpc.testing.BenchmarkService/StreamingCall")
	if err != nil {
		t.Fatal(err)
	}
	unary, err := dyncall.Find(protoregistry.GlobalFiles, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*doctor.Options)
		want error
	}{
		{"no target", func(o *doctor.Options) { o.Target = "" }, doctor.ErrTarget},
		{"negative rps", func(o *doctor.Options) { o.MaxRPS = -1 }, doctor.ErrMaxRPS},
		{"NaN rps", func(o *doctor.Options) { o.MaxRPS = math.NaN() }, doctor.ErrMaxRPS},
		{"negative inflight", func(o *doctor.Options) { o.MaxInflight = -2 }, doctor.ErrMaxInflight},
		{"max-inflight 0", func(o *doctor.Options) { o.MaxInflight = 0 }, doctor.ErrMaxInflight},
		{"max-inflight 1: one in-flight count", func(o *doctor.Options) { o.MaxInflight = 1 }, doctor.ErrMaxInflight},
		{"pools 0", func(o *doctor.Options) { o.Pools = []int{0} }, doctor.ErrPools},
		{"pool of 1", func(o *doctor.Options) { o.Pools = []int{1, 4} }, doctor.ErrPools},
		{"pool too large", func(o *doctor.Options) { o.Pools = []int{doctor.MaxPool + 1} }, doctor.ErrPools},
		{"pool twice", func(o *doctor.Options) { o.Pools = []int{2, 2} }, doctor.ErrPools},
		{"no pools", func(o *doctor.Options) { o.Pools = nil }, doctor.ErrPools},
		{"budget 0s", func(o *doctor.Options) { o.Budget = 0 }, doctor.ErrBudget},
		{"budget -1s", func(o *doctor.Options) { o.Budget = -time.Second }, doctor.ErrBudget},
		// The adaptive pool's steps come on top of the budget: the budget
		// covers the 4 fixed layouts (shared and 3 pools) either way.
		{"budget below two steps per fixed layout, adaptive on", func(o *doctor.Options) { o.Budget = 4*2*2*time.Second - 1 }, doctor.ErrBudget},
		{"budget below two steps per fixed layout", func(o *doctor.Options) { o.Adaptive, o.Budget = false, 4*2*2*time.Second-1 }, doctor.ErrBudget},
		{"negative payload", func(o *doctor.Options) { o.PayloadBytes = -1 }, doctor.ErrPayload},
		{"payload above the message limit", func(o *doctor.Options) { o.PayloadBytes = doctor.MaxPayload + 1 }, doctor.ErrPayload},
		{"interval 0", func(o *doctor.Options) { o.Interval = 0 }, doctor.ErrStep},
		{"dial timeout 0", func(o *doctor.Options) { o.DialTimeout = 0 }, doctor.ErrStep},
		{"bidi call", func(o *doctor.Options) { o.Call, o.Request = bidi, bidi.NewResponse() }, doctor.ErrCall},
		{"call without request", func(o *doctor.Options) { o.Call = unary }, doctor.ErrCall},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A target that answers nothing: a study that started would
			// fail as unreachable, not with the option's error.
			o := doctor.DefaultOptions("127.0.0.1:1")
			tc.edit(&o)
			// No step ran: a refusal up front returns no study, and the
			// Step hook never fires.
			o.Step = func(r *result.Record) error {
				t.Errorf("a step ran (%s at %d) before the refusal", r.Spec.ConnMode, r.Spec.Inflight)
				return nil
			}
			d, err := doctor.Run(ctx, o)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want an error wrapping %v", err, tc.want)
			}
			if d != nil {
				t.Errorf("got a study (%v), want a refusal up front", d)
			}
		})
	}
	// The defaults themselves pass, and the budget's edge is exact: 5
	// layouts (shared, pools of 2, 4 and 8, the adaptive pool) × 2
	// in-flight counts × 2 s per step.
	o := doctor.DefaultOptions("127.0.0.1:1")
	o.Budget = 5 * 2 * 2 * time.Second
	if err := o.Validate(); err != nil {
		t.Errorf("DefaultOptions with a 20s budget: got %v, want nil", err)
	}
	// A closed port: a clear error, not a hang.
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis.Addr().String()
	lis.Close()
	o = doctor.DefaultOptions(addr)
	o.DialTimeout = 500 * time.Millisecond
	if _, err := doctor.Run(ctx, o); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("got %v, want an unreachable-target error", err)
	}
}

// TestDoctorPoolWinsThroughNetem: rpclab's server behind rpclab's netem
// proxy with a bandwidth limit per proxied connection (each connection the
// proxy accepts gets its own rate-limited pipes, netem/proxy.go handle), so
// a pool of N connections gets about N times one connection's throughput
// whatever the CPU: the study must find the shared connection IS the
// bottleneck and advise a pool.
func TestDoctorPoolWinsThroughNetem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	// 4 Mbit/s each way with 8 KiB payloads: about 60 RPCs per second per
	// connection, so the bytes, not the CPU (two cores shared with other
	// work), set the pace.
	const rate, payload = 4_000_000, 8 << 10
	p, err := netem.Listen("127.0.0.1:0", startServer(t), netem.Symmetric(netem.Link{RateBps: rate}))
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ctx)
	t.Cleanup(func() { p.Close() })

	o := doctor.DefaultOptions(p.Addr().String())
	o.Budget, o.MaxInflight, o.Pools, o.PayloadBytes = 12*time.Second, 8, []int{2, 4}, payload
	o.Warmup, o.Interval = 200*time.Millisecond, 500*time.Millisecond
	o.Load.AdaptiveRule = quickRule()
	d, err := doctor.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report.DoctorText(&out, d.Records, d.Notes)
	t.Logf("study through netem at %d bit/s per connection:\n%s", rate, out.String())
	if len(d.Verdicts) != 1 {
		t.Fatalf("got %d verdicts, want one:\n%s", len(d.Verdicts), out.String())
	}
	v := d.Verdicts[0]
	if v.Kind == verdict.BusyHost {
		// The study says itself that other work took the CPUs its steps
		// ran on (verdict.OtherWorkShare): its figures are not the link's,
		// and no finding of it can be checked here.
		t.Skipf("the study found a busy host (steps at in-flight %v); nothing to check:\n%s", v.Busy.Inflights, out.String())
	}
	if v.Kind != verdict.ConnBottleneck || v.Conns < 2 {
		t.Fatalf("got %s (ratio %.2f), want %s with a pool advised:\n%s", v.Kind, v.Ratio, verdict.ConnBottleneck, out.String())
	}
	// Two connections double the bandwidth: well clear of the threshold.
	if v.Ratio < 1.5 {
		t.Errorf("got ratio %.2f, want at least 1.5 (a pool of 4 has 4 times the bandwidth)", v.Ratio)
	}
	// The advice is a fixed pool, or the adaptive pool when it matched the
	// best fixed one (its steps warm up until it can settle, so it can).
	change := "pool.WithSize(" + strconv.Itoa(v.Conns) + ")"
	if strings.HasPrefix(v.Enough, "pool:auto") {
		change = "pool.WithAdaptive(1, 4)"
	}
	for _, want := range []string{"Client-side connection bottleneck", change} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verdict lacks %q:\n%s", want, out.String())
		}
	}
	if got := p.Stats().Accepted; got < 1+2+4 {
		t.Errorf("the proxy accepted %d connections, want the study's traffic through it", got)
	}
}

// unimplemented answers every BenchmarkService call with Unimplemented.
type unimplemented struct {
	pb.UnimplementedBenchmarkServiceServer
}

// TestDoctorEveryRPCFailed: when the first step's RPCs all fail, the error
// names the status code they failed with and the server's message.
func TestDoctorEveryRPCFailed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, unimplemented{})
	o := doctor.DefaultOptions(testutil.Serve(t, s))
	o.Budget, o.MaxInflight, o.Pools = 6*time.Second, 2, []int{2}
	o.Warmup, o.Interval = 100*time.Millisecond, 300*time.Millisecond
	_, err := doctor.Run(ctx, o)
	want := regexp.MustCompile(`^doctor: every RPC failed \([1-9][0-9]*\): Unimplemented: method UnaryCall not implemented$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestStepWarmup: doctor's own adaptive pool runs adaptive.DefaultRule
// between 1 and the largest pool, and its step warms up for that rule's
// SettleTime; a fixed layout's for the study's warm-up.
func TestStepWarmup(t *testing.T) {
	def := adaptive.DefaultRule(1, 8)
	perConn := def.TrialTime() + def.Interval
	// doctor's own adaptive pool runs adaptive.DefaultRule between 1 and the
	// largest pool.
	o := doctor.DefaultOptions("127.0.0.1:1")
	if got, want := o.AdaptiveRule(), adaptive.DefaultRule(1, 8); got != want {
		t.Errorf("got rule %+v, want adaptive.DefaultRule(1, 8) %+v", got, want)
	}
	auto := loadgen.ConnMode{Kind: loadgen.AutoPool, Min: 1, N: 8}
	if got, want := o.StepWarmup(auto, 64), def.Interval+7*perConn; got != want {
		t.Errorf("adaptive step at in-flight 64: got warm-up %v, want %v", got, want)
	}
	if got, want := o.StepWarmup(loadgen.ConnMode{Kind: loadgen.Pooled, N: 8}, 64), o.Warmup; got != want {
		t.Errorf("fixed step: got warm-up %v, want %v", got, want)
	}
}

// TestDoctorAdaptiveStepsWarmUpToSettle: in a study, each adaptive-pool
// step warms up for its rule's settling time at its in-flight count (or
// the study's warm-up when that is longer), then on while a trial is
// under way (at most adaptive.Rule.SettleWait), every other step for the
// study's warm-up.
func TestDoctorAdaptiveStepsWarmUpToSettle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	o := doctor.DefaultOptions(startServer(t))
	o.Budget, o.MaxInflight, o.Pools = 4*time.Second, 4, []int{2}
	o.Warmup, o.Interval = 20*time.Millisecond, 300*time.Millisecond
	o.Load.AdaptiveRule = quickRule()
	d, err := doctor.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	rule := o.AdaptiveRule()
	var autoSteps int
	var fixedN, autoN []int // the in-flight counts measured
	for _, r := range d.Records {
		want, late := o.Warmup, time.Duration(0)
		if r.Spec.ConnMode != verdict.AutoPoolMode && !slices.Contains(fixedN, r.Spec.Inflight) {
			fixedN = append(fixedN, r.Spec.Inflight)
		}
		if r.Spec.ConnMode == verdict.AutoPoolMode {
			autoN = append(autoN, r.Spec.Inflight)
			autoSteps++
			want = max(o.Warmup, rule.SettleTime(r.Spec.Inflight))
			late = rule.SettleWait() // and on while a trial is under way
		}
		// The warm-up ends at the first check after its bound: on a busy
		// host that check comes a little late (180.02 ms for a 180 ms
		// bound), which slack allows.
		const slack = 100 * time.Millisecond
		if got := time.Duration(r.Spec.WarmupNS); got < want || got > want+late+slack {
			t.Errorf("%s at in-flight %d: got warm-up %v, want %v (to %v more)", verdict.ConnLabel(&r), r.Spec.Inflight, got, want, late)
		}
	}
	if autoSteps < verdict.MinInflights {
		t.Errorf("got %d adaptive steps, want at least %d", autoSteps, verdict.MinInflights)
	}
	// The adaptive pool runs only at the largest counts the fixed layouts
	// reached, smallest first.
	slices.Sort(fixedN)
	if want := fixedN[max(0, len(fixedN)-verdict.MinInflights):]; !slices.Equal(autoN, want) {
		t.Errorf("adaptive steps at in-flight %v, want the fixed layouts' top %v (of %v)", autoN, want, fixedN)
	}
	// At in-flight 2 the quick rule's pool can reach 2: 10 ms, then a 40
	// ms trial (one block of four intervals) + 10 ms for the one
	// connection it adds, longer than o.Warmup.
	if got, want := rule.SettleTime(2), 60*time.Millisecond; got != want {
		t.Errorf("quick rule at in-flight 2: got %v, want %v", got, want)
	}
}

// heldServer answers no unary call: each waits until its client gives up.
type heldServer struct {
	pb.UnimplementedBenchmarkServiceServer
}

func (heldServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestDoctorMarksStall: doctor judges each step for a stall as sweep does
// (verdict.MarkStall): against a server that holds every RPC, the first
// step's record is stalled, saying the server stalled, and the study ends
// with that error, where it had said only that no RPC completed.
func TestDoctorMarksStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, heldServer{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	o := doctor.DefaultOptions(lis.Addr().String())
	o.Budget, o.MaxInflight, o.Pools = 10*time.Second, 2, []int{2}
	// The RPCs go out in the warm-up: at the end of a StallAge interval
	// the oldest has waited longer than StallAge.
	o.Warmup, o.Interval = 100*time.Millisecond, verdict.StallAge
	d, err := doctor.Run(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "the server stalled") {
		t.Errorf("got error %v, want one saying the server stalled", err)
	}
	if d == nil || len(d.Records) != 1 || d.Records[0].Status != result.StatusStalled {
		t.Fatalf("got %+v, want the one stalled step's record", d)
	}
}

// TestDoctorTargetGone: a target that stops accepting connections after
// the study's first steps ends the study at once with an error wrapping
// ErrTargetGone that says why (connection refused), and every record
// measured, the failed step's included, is kept.
func TestDoctorTargetGone(t *testing.T) {
	ctx := testutil.LongContext(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	o := doctor.DefaultOptions(lis.Addr().String())
	o.Budget, o.MaxInflight, o.Pools, o.Adaptive = 20*time.Second, 8, []int{2, 4}, false
	o.Warmup, o.Interval, o.DialTimeout = 50*time.Millisecond, 200*time.Millisecond, time.Second
	steps := 0
	o.Step = func(*result.Record) error {
		if steps++; steps == 2 {
			s.Stop() // closes the listener: new connections are refused
		}
		return nil
	}
	d, err := doctor.Run(ctx, o)
	if !errors.Is(err, doctor.ErrTargetGone) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want the target gone, saying connection refused", err)
	}
	if d == nil || len(d.Records) != steps || len(d.Records) < 3 {
		t.Fatalf("got %d records of %d steps, want every step's record kept", len(d.Records), steps)
	}
	if last := d.Records[len(d.Records)-1]; last.Status != result.StatusFailed {
		t.Errorf("got the last step %s, want it failed", last.Status)
	}
}

// TestDoctorClimbsLikeWithLike: against a server whose connections each
// carry at most 500 RPCs/s (a 2 ms think time, one stream per
// connection), the study measures shared at every in-flight count a pool
// is measured at, and a pool's climb ends only after two steps in a row
// (FlatSteps) that did not grow by verdict.Growth over its best before
// them.
func TestDoctorClimbsLikeWithLike(t *testing.T) {
	ctx := testutil.LongContext(t)
	o := doctor.DefaultOptions(testutil.Serve(t, server.New(server.Options{Delay: 2 * time.Millisecond, MaxConcurrentStreams: 1})))
	o.Budget, o.MaxInflight, o.Pools, o.Adaptive = 60*time.Second, 64, []int{2}, false
	o.Warmup, o.Interval = 50*time.Millisecond, 300*time.Millisecond
	d, err := doctor.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string][]int{}
	var pool []float64
	for _, r := range d.Records {
		counts[r.Spec.ConnLabel()] = append(counts[r.Spec.ConnLabel()], r.Spec.Inflight)
		if r.Spec.ConnLabel() == "pool:2" {
			pool = append(pool, r.ThroughputRPS)
		}
	}
	if !slices.Equal(counts["shared"], counts["pool:2"]) {
		t.Errorf("got shared at in-flight %v and pool:2 at %v, want the same counts", counts["shared"], counts["pool:2"])
	}
	// The climb's end as the guide states it: two steps in a row.
	const flat = 2
	if n := len(pool) - d.Rounds; n < flat+1 || slices.Max(counts["pool:2"]) >= o.MaxInflight {
		t.Fatalf("got pool:2 at in-flight %v, want its climb ended by flattening before the cap", counts["pool:2"])
	}
	// The deciding comparison was measured again, in interleaved rounds,
	// and the verdict gives its range.
	if len(d.Verdicts) != 1 || d.Verdicts[0].Rounds < 2 || !strings.Contains(d.Verdicts[0].Text, fmt.Sprintf(" over %d rounds", d.Verdicts[0].Rounds)) {
		t.Errorf("got %q, want a verdict on a ratio measured in rounds", verdict.Text(d.Verdicts))
	}
	counts["pool:2"] = counts["pool:2"][:len(counts["pool:2"])-d.Rounds] // the rounds repeat the top count
	pool = pool[:len(pool)-d.Rounds]
	best := slices.Max(pool[:len(pool)-flat])
	for _, rps := range pool[len(pool)-flat:] {
		if verdict.Grew(best, rps) {
			t.Errorf("pool:2's climb ended at %v req/s (best before %v): a step grew, want its last %d flat", pool, best, flat)
		}
	}
}

// TestDoctorInterruptedKeepsRecords: a study stopped mid-way returns
// ctx's error and every record measured until then.
func TestDoctorInterruptedKeepsRecords(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	o := doctor.DefaultOptions(startServer(t))
	o.Budget, o.MaxInflight, o.Pools, o.Adaptive = 20*time.Second, 8, []int{2}, false
	o.Warmup, o.Interval = 20*time.Millisecond, 100*time.Millisecond
	steps := 0
	o.Step = func(*result.Record) error {
		if steps++; steps == 3 {
			cancel()
		}
		return nil
	}
	d, err := doctor.Run(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the study interrupted", err)
	}
	if d == nil || len(d.Records) != steps || steps < 3 {
		t.Fatalf("got %d records of %d steps, want every step's record kept", len(d.Records), steps)
	}
}
