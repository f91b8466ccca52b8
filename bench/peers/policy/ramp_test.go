// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// startBusyServer starts an rpclab ping server on loopback whose every
// unary call takes at least work (service time, so that an open loop of a
// few hundred RPCs a second keeps several in flight).
func startBusyServer(t *testing.T, work time.Duration) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	busy := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		w := time.NewTimer(work)
		defer w.Stop()
		select {
		case <-w.C:
		case <-ctx.Done():
		}
		return h(ctx, req)
	}
	s := server.New(server.Options{}, grpc.UnaryInterceptor(busy))
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// quickRule is rpclab's rule on a short clock: it decides every 10 ms,
// takes any write wait as a connection's limit, and settles, cools down
// and shrinks within tens of ms, so a ramp of a second shows it grow and
// shrink.
func quickRule(maxConns int) Policy {
	return Policy{Name: "quick-rule", Option: func(int) pool.Option {
		r := adaptive.DefaultRule(1, maxConns)
		r.Interval, r.WriteWait = 10*time.Millisecond, time.Nanosecond
		r.Trial, r.Cooldown, r.MaxBackoff, r.IdleFor = 50*time.Millisecond, 30*time.Millisecond, 200*time.Millisecond, 60*time.Millisecond
		return adaptive.WithRule(r)
	}}
}

// TestRunRampOnePoolUpAndDown: a short ramp (50, 1000, 50 RPC/s after an
// unrecorded warm-up at 50, each call 4 ms of server work, so 4 in flight
// at the top) on one pool. Under
// the quick rule the pool grows during the high step and, once the load
// has stopped, is back at its min of 1; a fixed pool of 2 stays at 2. No
// RPC fails, and each step's counts add up.
func TestRunRampOnePoolUpAndDown(t *testing.T) {
	target := startBusyServer(t, 4*time.Millisecond)
	const maxConns = 3
	spec := RampSpec{Rates: Mirror([]float64{50, 1000}), Warmup: 100 * time.Millisecond, Step: 400 * time.Millisecond, Tail: 20 * time.Second,
		MaxOutstanding: 64, MaxConns: maxConns}
	for _, tc := range []struct {
		pol      Policy
		adaptive bool
		fixed    int // the size of a fixed pool (0: adaptive)
	}{
		{pol: quickRule(maxConns), adaptive: true},
		{pol: FixedPolicy(2), fixed: 2},
	} {
		t.Run(tc.pol.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r, err := RunRamp(ctx, target, tc.pol, spec)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(r.Steps), 3; got != want {
				t.Fatalf("got %d steps, want %d", got, want)
			}
			if got, want := r.FallAt, 2*spec.Step; got != want {
				t.Errorf("load fell at %v, want %v (the start of the third step)", got, want)
			}
			for i, s := range r.Steps {
				want := int64(math.Ceil(s.Offered * spec.Step.Seconds()))
				if s.Offered != spec.Rates[i] || s.Scheduled != want {
					t.Errorf("step %d: got %v RPC/s, %d scheduled; want %v, %d", i, s.Offered, s.Scheduled, spec.Rates[i], want)
				}
				if s.Sent+s.Unsent != s.Scheduled || s.OK+s.Failed != s.Sent {
					t.Errorf("step %d: got %d sent + %d unsent of %d, %d ok + %d failed; want the counts to add up",
						i, s.Sent, s.Unsent, s.Scheduled, s.OK, s.Failed)
				}
				if s.Failed != 0 || s.OK == 0 {
					t.Errorf("step %d: got %d ok, %d failed; want RPCs that succeed and none that fails", i, s.OK, s.Failed)
				}
				if got, want := s.Achieved, float64(s.OK)/spec.Step.Seconds(); got != want {
					t.Errorf("step %d: got %v RPC/s achieved, want %v (its OK RPCs over the step)", i, got, want)
				}
				if s.P99 < 4*time.Millisecond {
					t.Errorf("step %d: got P99 %v, want at least the server's 4ms of work", i, s.P99)
				}
				if s.Conns < 1 || s.MaxConns < s.Conns || s.MaxConns > maxConns {
					t.Errorf("step %d: got %d connections (most %d), want within 1..%d", i, s.Conns, s.MaxConns, maxConns)
				}
				if tc.fixed > 0 && (s.Conns != tc.fixed || s.MaxConns != tc.fixed || s.Resizes != 0) {
					t.Errorf("step %d: got %d connections (most %d, %d resizes), want a fixed %d", i, s.Conns, s.MaxConns, s.Resizes, tc.fixed)
				}
			}
			if r.FailedAtResize != 0 {
				t.Errorf("got %d RPCs failed in steps with a resize, want 0", r.FailedAtResize)
			}
			if got := r.Adaptive; got != tc.adaptive {
				t.Fatalf("got adaptive %v, want %v", got, tc.adaptive)
			}
			if !tc.adaptive {
				if r.Events != nil || r.BackAtMin {
					t.Errorf("got %d events, back at min %v; want none for a fixed pool", len(r.Events), r.BackAtMin)
				}
				return
			}
			if got := r.Steps[1].MaxConns; got < 2 {
				t.Errorf("high step: got at most %d connections, want the pool to grow (events %+v)", got, r.Events)
			}
			if !r.BackAtMin || r.Min != 1 || r.BackToMin < 0 {
				t.Errorf("got back at min %v (min %d) after %v, want back at 1 (events %+v)", r.BackAtMin, r.Min, r.BackToMin, r.Events)
			}
			var grows, shrinks int
			for _, e := range r.Events {
				switch {
				case e.To > e.From:
					grows++
				case e.To < e.From:
					shrinks++
				}
			}
			if grows == 0 || shrinks != grows {
				t.Errorf("got %d grows and %d shrinks, want at least one grow and as many shrinks (back at 1); events %+v", grows, shrinks, r.Events)
			}
		})
	}
}

// TestRunRampRejectsBadSpecs: a spec that cannot run is an error before
// any connection is made.
func TestRunRampRejectsBadSpecs(t *testing.T) {
	ok := RampSpec{Rates: []float64{10}, Step: time.Second, MaxOutstanding: 1, MaxConns: 1}
	for _, tc := range []struct {
		name string
		edit func(*RampSpec)
		want error
	}{
		{"no rate", func(s *RampSpec) { s.Rates = nil }, ErrRamp},
		{"zero rate", func(s *RampSpec) { s.Rates = []float64{10, 0} }, ErrRamp},
		{"NaN rate", func(s *RampSpec) { s.Rates = []float64{math.NaN()} }, ErrRamp},
		{"no step", func(s *RampSpec) { s.Step = 0 }, ErrRamp},
		{"negative tail", func(s *RampSpec) { s.Tail = -time.Second }, ErrRamp},
		{"negative warm-up", func(s *RampSpec) { s.Warmup = -time.Second }, ErrRamp},
		{"no outstanding", func(s *RampSpec) { s.MaxOutstanding = 0 }, ErrRamp},
		{"no connections", func(s *RampSpec) { s.MaxConns = 0 }, ErrConns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			if _, err := RunRamp(context.Background(), "127.0.0.1:1", FixedPolicy(1), s); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestMirrorAndFall: Mirror goes up and back down without repeating the
// peak, and the load falls at the first step below the peak.
func TestMirrorAndFall(t *testing.T) {
	for _, tc := range []struct {
		up   []float64
		want []float64
		fall int // step index
	}{
		{[]float64{5, 10, 20}, []float64{5, 10, 20, 10, 5}, 3},
		{[]float64{5}, []float64{5}, 1},
	} {
		got := Mirror(tc.up)
		if len(got) != len(tc.want) {
			t.Fatalf("Mirror(%v): got %v, want %v", tc.up, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("Mirror(%v): got %v, want %v", tc.up, got, tc.want)
			}
		}
		if got, want := fallAt(got, time.Second), time.Duration(tc.fall)*time.Second; got != want {
			t.Errorf("fallAt(%v): got %v, want %v", tc.want, got, want)
		}
	}
}
