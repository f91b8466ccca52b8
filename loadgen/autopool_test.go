// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"reflect"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/server"
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
	ev := func(s, from, to int, a pool.Action, r pool.Reason) pool.Event {
		return pool.Event{At: at(s), From: from, To: to, Action: a, Reason: r}
	}
	events := []pool.Event{
		ev(1, 1, 2, pool.Grow, pool.ReasonLimit),
		ev(2, 2, 2, pool.Hold, pool.ReasonSettling),
		ev(5, 2, 3, pool.Grow, pool.ReasonLimit),
		ev(8, 3, 2, pool.Shrink, pool.ReasonNoGain),
		ev(20, 2, 1, pool.Shrink, pool.ReasonIdle),
	}
	tests := []struct {
		name       string
		start, end time.Time
		want       []result.PoolSize
	}{
		{"before any resize", at(0), at(1).Add(-1), []result.PoolSize{{TNS: 0, Size: 1, Reason: "start"}}},
		{"from the first resize on", at(1), at(10), []result.PoolSize{{TNS: 0, Size: 2, Reason: "start"}, {TNS: 4e9, Size: 3, Reason: pool.ReasonLimit.String()}, {TNS: 7e9, Size: 2, Reason: pool.ReasonNoGain.String()}}},
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
		many = append(many, ev(i+1, 1+i%2, 2-i%2, pool.Grow, pool.ReasonLimit))
	}
	if got, want := len(PoolSizes(many, 1, t0, at(10*result.MaxPoolSizes))), result.MaxPoolSizes; got != want {
		t.Errorf("bounded: got %d entries, want %d", got, want)
	}
}

// TestAutoPoolStepRule: Options.AdaptiveRule sizes a pool:auto step in
// place of pool.DefaultRule, within the layout's bounds, not the rule's:
// a rule that decides every 10 ms and takes any RPC in flight as the
// limit resizes the pool within a 300 ms interval (DefaultRule decides
// once a second), and never past the layout's max of 3.
func TestAutoPoolStepRule(t *testing.T) {
	target := testutil.Serve(t, server.New(server.Options{}))
	spec := shortSpec(target)
	spec.Conns = []ConnMode{{Kind: AutoPool, Min: 1, N: 3, Pick: pool.RoundRobin}}
	spec.Inflight = []int{8}
	rule := pool.DefaultRule(1, 100) // Min and Max give way to the layout's
	rule.Interval, rule.WriteWaitHigh, rule.WriteWaitBusy, rule.InFlightPerConn = 10*time.Millisecond, 0, 0, 0
	rule.Settle, rule.Cooldown, rule.IdleFor = 20*time.Millisecond, 10*time.Millisecond, time.Second
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
