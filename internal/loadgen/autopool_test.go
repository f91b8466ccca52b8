// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// TestAutoPoolStep: a pool:auto step opens a pool.WithAdaptive pool on a
// real server, records its bounds, and its pool_sizes start at min (no
// connection is the limit with one RPC in flight); the record passes
// result.Check.
func TestAutoPoolStep(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: AutoPool, Min: 1, N: 3, Pick: pool.RoundRobin}}
	var recs []*result.Record
	if err := Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error { recs = append(recs, r); return result.Check(r) }, nil); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	r := recs[0]
	if got, want := r.Spec.ConnLabel(), "pool:auto:1:3"; got != want {
		t.Errorf("label: got %q, want %q", got, want)
	}
	if r.Status != result.StatusOK || r.Requests == 0 {
		t.Errorf("got status %s with %d requests, want ok with some", r.Status, r.Requests)
	}
	if got, want := r.PoolSizes, []result.PoolSize{{TNS: 0, Size: 1, Reason: "start"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pool_sizes: got %+v, want %+v", got, want)
	}
	if r.ConnsObserved != 1 {
		t.Errorf("conns_observed: got %d, want 1", r.ConnsObserved)
	}
}

// TestPoolSizes: the record's pool_sizes keep the size at the interval's
// start (the last resize before it), then each resize inside it, drop
// holds and anything after its end, and stop at result.MaxPoolSizes.
func TestPoolSizes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const limit, trial, noGain, idle = "limit", "trial", "no gain", "idle"
	ev := func(s, from, to int, r string) pool.Event {
		return pool.Event{At: at(s), From: from, To: to, Reason: r}
	}
	events := []pool.Event{
		ev(1, 1, 2, limit),
		ev(2, 2, 2, trial),
		ev(5, 2, 3, limit),
		ev(8, 3, 2, noGain),
		ev(20, 2, 1, idle),
	}
	tests := []struct {
		name       string
		start, end time.Time
		want       []result.PoolSize
	}{
		{"before any resize", at(0), at(1).Add(-1), []result.PoolSize{{TNS: 0, Size: 1, Reason: "start"}}},
		{"from the first resize on", at(1), at(10), []result.PoolSize{{TNS: 0, Size: 2, Reason: "start"}, {TNS: 4e9, Size: 3, Reason: limit}, {TNS: 7e9, Size: 2, Reason: noGain}}},
		{"after every resize", at(30), at(40), []result.PoolSize{{TNS: 0, Size: 1, Reason: "start"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PoolSizes(events, 1, tc.start, tc.end); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	var many []pool.Event
	for i := range 2 * result.MaxPoolSizes {
		many = append(many, ev(i+1, 1+i%2, 2-i%2, limit))
	}
	if got, want := len(PoolSizes(many, 1, t0, at(10*result.MaxPoolSizes))), result.MaxPoolSizes; got != want {
		t.Errorf("bounded: got %d entries, want %d", got, want)
	}
}

// TestAutoPoolStepRule: Options.AdaptiveRule sizes a pool:auto step in
// place of adaptive.DefaultRule, within the layout's bounds, not the rule's:
// a rule that decides every 10 ms and takes any RPC in flight as the
// limit resizes the pool within a 300 ms interval (DefaultRule decides
// once a second), and never past the layout's max of 3.
func TestAutoPoolStepRule(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: AutoPool, Min: 1, N: 3, Pick: pool.RoundRobin}}
	spec.Inflight = []int{8}
	// The sweep's short warm-up, not the rule's settling time: a pool
	// that settled in the warm-up (trials failing on a busy machine, then
	// the settled back-off) would make no resize in the interval, which
	// is what this test reads the rule by.
	spec.AutoWarmup = spec.Warmup
	rule := adaptive.DefaultRule(1, 100) // Min and Max give way to the layout's
	rule.Interval, rule.WriteWait = 10*time.Millisecond, 0
	rule.Trial, rule.Cooldown, rule.IdleFor = 20*time.Millisecond, 10*time.Millisecond, time.Second
	// Trials that fail (one process serves its own loopback: a second
	// connection need not gain) try again every 20 ms at most, so the
	// pool resizes in the interval whatever they measure.
	rule.MaxBackoff = 20 * time.Millisecond
	var recs []*result.Record
	if err := Sweep(testutil.Context(t), spec, Options{AdaptiveRule: &rule}, func(r *result.Record) error { recs = append(recs, r); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	sizes := recs[0].PoolSizes
	most := 0
	for _, s := range sizes {
		most = max(most, s.Size)
	}
	if most < 2 || most > 3 {
		t.Errorf("pool_sizes: got %+v, want the pool resized within 1..3", sizes)
	}
}

// TestStepWarmup: a fixed layout's step warms up for Warmup; a pool:auto
// step for AutoWarmup when given, else for the longer of Warmup and the
// settling time of its rule (adaptive.DefaultRule, or Options.AdaptiveRule)
// between the layout's own bounds; Duration adds the steps up, and a
// negative AutoWarmup is refused naming it.
func TestStepWarmup(t *testing.T) {
	def18, def12 := adaptive.DefaultRule(1, 8), adaptive.DefaultRule(1, 2)
	quick := adaptive.DefaultRule(1, 100) // bounds give way to the layout's
	quick.Interval, quick.Trial, quick.Cooldown = 10*time.Millisecond, 20*time.Millisecond, 10*time.Millisecond
	quick13 := quick
	quick13.Min, quick13.Max = 1, 3
	auto := func(lo, hi int) ConnMode { return ConnMode{Kind: AutoPool, Min: lo, N: hi, Pick: pool.RoundRobin} }
	fixed := ConnMode{Kind: Pooled, N: 8, Pick: pool.RoundRobin}
	tests := []struct {
		name           string
		warmup, autoWU time.Duration
		step           Step
		rule           *adaptive.Rule
		want           time.Duration
	}{
		{"fixed pool", 2 * time.Second, 0, Step{Conn: fixed, Inflight: 64}, nil, 2 * time.Second},
		{"fixed pool, auto warm-up given", 2 * time.Second, 5 * time.Second, Step{Conn: fixed, Inflight: 64}, nil, 2 * time.Second},
		{"pool:auto:1:8 at 64: settles", 2 * time.Second, 0, Step{Conn: auto(1, 8), Inflight: 64}, nil, def18.SettleTime(64)},
		{"pool:auto:1:2 at 8: its own max", 2 * time.Second, 0, Step{Conn: auto(1, 2), Inflight: 8}, nil, def12.SettleTime(8)},
		{"pool:auto at 1: never grows, Warmup", 2 * time.Second, 0, Step{Conn: auto(1, 8), Inflight: 1}, nil, 2 * time.Second},
		{"Warmup longer than settling", 5 * time.Minute, 0, Step{Conn: auto(1, 8), Inflight: 64}, nil, 5 * time.Minute},
		{"auto warm-up given", 2 * time.Second, 5 * time.Second, Step{Conn: auto(1, 8), Inflight: 64}, nil, 5 * time.Second},
		{"the options' rule, the layout's bounds", 0, 0, Step{Conn: auto(1, 3), Inflight: 8}, &quick, quick13.SettleTime(8)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Spec{Warmup: tc.warmup, AutoWarmup: tc.autoWU}
			if got := s.StepWarmup(tc.step, tc.rule); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if d := def18.SettleTime(64); d != time.Second+7*(def18.TrialTime()+def18.Interval) || d < time.Minute {
		t.Errorf("default settling at 64 in flight: got %v, want a minute and more", d)
	}
	s := &Spec{Conns: []ConnMode{{Kind: Shared}, auto(1, 8)}, RPCs: []string{Unary}, Inflight: []int{1, 64}, Warmup: time.Second, Interval: 2 * time.Second}
	if got, want := s.Duration(nil), 3*3*time.Second+def18.SettleTime(64)+2*time.Second; got != want {
		t.Errorf("Duration: got %v, want %v (three steps of 1s+2s, one of settling+2s)", got, want)
	}
	s = shortSpec("127.0.0.1:1")
	s.Conns, s.AutoWarmup = []ConnMode{auto(1, 8)}, -time.Second
	if err := s.Validate(); !errors.Is(err, ErrAutoWarmup) {
		t.Errorf("negative AutoWarmup: got %v, want ErrAutoWarmup", err)
	}
}

// TestAutoPoolStepWarmsUpToSettle: in one sweep beside a fixed layout, the
// pool:auto step warms up until its pool can settle (the record's
// warmup_ns, and its interval starts no sooner after the step began),
// while the fixed layout's keeps the sweep's short Warmup.
func TestAutoPoolStepWarmsUpToSettle(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.Warmup = 20 * time.Millisecond
	spec.Conns = []ConnMode{{Kind: Shared}, {Kind: AutoPool, Min: 1, N: 3, Pick: pool.RoundRobin}}
	spec.Inflight = []int{8}
	rule := adaptive.DefaultRule(1, 100)
	rule.Interval, rule.Trial, rule.Cooldown = 50*time.Millisecond, 200*time.Millisecond, 50*time.Millisecond
	settle := spec.StepWarmup(Step{Conn: spec.Conns[1], Inflight: 8}, &rule)
	if settle < 500*time.Millisecond {
		t.Fatalf("the rule settles in %v: want it well past Warmup", settle)
	}
	began := map[ConnKind]time.Time{}
	prog := Progress(func(e Event) {
		if e.Kind == StepStarted {
			began[e.Step.Conn.Kind] = time.Now()
		}
	})
	var recs []*result.Record
	if err := Sweep(testutil.Context(t), spec, Options{AdaptiveRule: &rule}, func(r *result.Record) error { recs = append(recs, r); return nil }, prog); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	if got := time.Duration(recs[0].Spec.WarmupNS); got != spec.Warmup {
		t.Errorf("shared: got warmup_ns %v, want %v", got, spec.Warmup)
	}
	// Past settle, the step waits out a change of size under way, at most
	// adaptive.Rule.SettleWait (TestWaitSettled).
	wu, most := time.Duration(recs[1].Spec.WarmupNS), settle+autoRule(spec.Conns[1], &rule).SettleWait()
	if wu < settle || wu > most {
		t.Errorf("pool:auto: got warmup_ns %v, want %v to %v", wu, settle, most)
	}
	if waited := recs[1].StartedAt.Sub(began[AutoPool]); waited < wu {
		t.Errorf("pool:auto's interval began %v after its step, want at least its warm-up %v", waited, wu)
	}
}

// TestWaitSettled: the wait past a pool:auto step's warm-up returns at
// once when the pool is not settling, once it stops settling, at the
// limit when it never does, and false when the context ends.
func TestWaitSettled(t *testing.T) {
	ctx := testutil.Context(t)
	if waited, ok := waitSettled(ctx, func() bool { return false }, time.Millisecond, time.Hour); waited != 0 || !ok {
		t.Errorf("not settling: got %v %v, want 0 true", waited, ok)
	}
	calls := 0
	settling := func() bool { calls++; return calls <= 3 }
	if waited, ok := waitSettled(ctx, settling, time.Millisecond, time.Hour); !ok || waited <= 0 || calls != 4 {
		t.Errorf("settling for three checks: got %v %v after %d checks, want a wait, true, after 4", waited, ok, calls)
	}
	limit := 20 * time.Millisecond
	if waited, ok := waitSettled(ctx, func() bool { return true }, time.Millisecond, limit); !ok || waited < limit {
		t.Errorf("always settling: got %v %v, want the limit %v and true", waited, ok, limit)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := waitSettled(cctx, func() bool { return true }, time.Millisecond, time.Hour); ok {
		t.Errorf("context ended: got true, want false")
	}
	if got, want := adaptive.DefaultRule(1, 8).SettleWait(), 24*time.Second; got != want {
		t.Errorf("DefaultRule(1, 8).SettleWait(): got %v, want %v", got, want)
	}
}

// changingSizer holds its pool's size and reports it is changing
// (pool.Pool.Settling) for its first left decisions, then never again;
// settled is when it stopped.
type changingSizer struct {
	left    atomic.Int32
	settled atomic.Int64
}

func (s *changingSizer) Size(time.Time, adaptive.Signals) adaptive.Decision {
	if s.left.Add(-1) == 0 {
		s.settled.Store(time.Now().UnixNano())
	}
	return adaptive.Decision{Action: adaptive.Hold, Reason: "changing"}
}

func (s *changingSizer) GrowFailed(time.Time) {}
func (s *changingSizer) Changing() bool       { return s.left.Load() > 0 }

// TestWarmUpWaitsOutChange: the warm-up of a pool:auto step whose rule
// sets it runs on past Spec.StepWarmup while the pool is settling and
// ends once it is not; the record's warm-up counts the wait. With
// --auto-warmup set, the step warms up for it and no more. The pool's
// Sizer stops changing after ten 10 ms decisions, five times the 20 ms
// warm-up, and never changes again: nothing here races the interval.
func TestWarmUpWaitsOutChange(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	rule := adaptive.DefaultRule(1, 1)
	rule.Interval, rule.Trial = 10*time.Millisecond, 5*time.Second // SettleWait 10 s
	for _, auto := range []time.Duration{0, 20 * time.Millisecond} {
		sz := &changingSizer{}
		sz.left.Store(10)
		p, err := pool.New(target, adaptive.WithSizer(1, 1, rule.Interval, sz),
			pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		spec := shortSpec(target)
		spec.Warmup, spec.AutoWarmup = 20*time.Millisecond, auto
		step := Step{Conn: ConnMode{Kind: AutoPool, Min: 1, N: 1, Pick: pool.RoundRobin}, Inflight: 1}
		if got := spec.StepWarmup(step, &rule); got != 20*time.Millisecond {
			t.Fatalf("StepWarmup: got %v, want 20ms (one connection settles at once)", got)
		}
		f := &frame{spec: spec, step: step, rec: &result.Record{}, pools: []*pool.Pool{p}}
		if !f.warmUp(testutil.Context(t), Options{AdaptiveRule: &rule}) {
			t.Fatal("warmUp: got false, want true")
		}
		end, waited := time.Now(), time.Duration(f.rec.Spec.WarmupNS)
		if auto > 0 {
			if waited != 0 {
				t.Errorf("--auto-warmup %v: the warm-up ran %v past it, want none", auto, waited)
			}
			continue
		}
		settled := sz.settled.Load()
		if settled == 0 || end.UnixNano() < settled || waited <= 0 {
			t.Errorf("warm-up ended at %v, %v past StepWarmup; the pool settled at %v: want the warm-up to wait for it",
				end, waited, time.Unix(0, settled))
		}
	}
}
