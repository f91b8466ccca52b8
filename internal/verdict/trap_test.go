// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// ydbCase builds issue 14's case: shared flattening, beside a
// channel-per-worker layout at about the same throughput whose channels
// the OS saw as observed connections.
func ydbCase(observed int) []result.Record {
	var recs []result.Record
	for _, n := range []int{1, 8, 16} {
		s := rec("shared", n, 1000*float64(min(n, 4)))
		c := rec("per-worker", n, 1020*float64(min(n, 4)))
		c.Env.Language, s.Env.Language = "cpp", "cpp"
		c.Spec.ConnMode = "channel-per-worker"
		c.ConnsObserved = min(observed, n)
		recs = append(recs, s, c)
	}
	return recs
}

// TestTrapVerdict: a layout that asked for N connections and got fewer is
// the trap, named with its cause and fix; one that got them is judged as
// usual.
func TestTrapVerdict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		observed int
		want     Kind
		text     []string
		absent   string
	}{
		{"channels on one connection", 1, Trap, []string{
			"cpp unary, in-flight 16: the trap: channel-per-worker asked for 16 connections but the OS saw 1",
			"identical arguments share one subchannel", "C-core stacks (C++, Python) and grpc-js", "--conn local-pool or distinct-args", "rpclab::ChannelPool, clients/cpp/pool"},
			// One connection seen: no layout had more than one to judge.
			"Among the layouts"},
		{"one connection short", 15, Trap, []string{"asked for 16 connections but the OS saw 15",
			"Among the layouts that got their connections: cpp unary, in-flight 16: channel-per-worker gave 1.02x"}, ""},
		{"every connection there", 16, BoundElsewhere, []string{"Every layout flattens together"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(ydbCase(tc.observed))
			if len(vs) != 1 || vs[0].Kind != tc.want {
				t.Fatalf("got %+v, want one %s verdict", vs, tc.want)
			}
			for _, part := range tc.text {
				if !strings.Contains(vs[0].Text, part) {
					t.Errorf("verdict %q lacks %q", vs[0].Text, part)
				}
			}
			if tc.absent != "" && strings.Contains(vs[0].Text, tc.absent) {
				t.Errorf("verdict %q says %q", vs[0].Text, tc.absent)
			}
		})
	}
}

// TestAdviseCountsObservedConnections: the advice orders layouts by the
// connections the OS saw, and by those requested only when the count was
// not read, which the verdict then says.
func TestAdviseCountsObservedConnections(t *testing.T) {
	a := rec("pool:4", 32, 9500) // saw 4
	b := rec("pool:3", 32, 9500) // asked for 3, saw 5 (e.g. a reflection connection beside them)
	b.ConnsObserved = 5
	best := rec("pool:8", 32, 10000)
	if _, got := Advise([]*result.Record{&a, &b, &best}); got != &a {
		t.Errorf("observed counts: got %s (%d), want pool:4, 4 connections seen against 5", ConnLabel(got), Conns(got))
	}
	for _, r := range []*result.Record{&a, &b, &best} {
		r.ConnsObserved = -1
	}
	if _, got := Advise([]*result.Record{&a, &b, &best}); got != &b {
		t.Errorf("unread counts: got %s, want pool:3, the fewest requested", ConnLabel(got))
	}

	for _, tc := range []struct {
		observed int
		note     bool
	}{{-1, true}, {4, false}} {
		var recs []result.Record
		for _, n := range []int{16, 32} {
			p := rec("pool:4", n, 20000)
			p.ConnsObserved = tc.observed
			recs = append(recs, rec("shared", n, 10000), p)
		}
		vs := Verdicts(recs)
		if len(vs) != 1 || vs[0].Kind != ConnBottleneck || vs[0].Conns != 4 {
			t.Fatalf("observed %d: got %+v, want a connection bottleneck advising 4", tc.observed, vs)
		}
		if got := strings.Contains(vs[0].Text, "connections counted as requested (the OS count was not read)"); got != tc.note {
			t.Errorf("observed %d: got the as-requested note %v, want %v: %q", tc.observed, got, tc.note, vs[0].Text)
		}
	}
}

// TestAdaptivePoolTrap: an adaptive pool is trapped only below its min:
// at min or above (up to its max) it has what it meant to open.
func TestAdaptivePoolTrap(t *testing.T) {
	for _, tc := range []struct {
		observed int
		want     bool
	}{
		{1, true}, {2, false}, {5, false},
	} {
		r := rec("shared", 32, 1000)
		r.Spec.ConnMode, r.Spec.ConnsMin, r.Spec.ConnsRequested, r.ConnsObserved = AutoPoolMode, 2, 8, tc.observed
		if got := Trapped(&r); got != tc.want {
			t.Errorf("pool:auto:2:8 with %d connections seen: got trapped %v, want %v", tc.observed, got, tc.want)
		}
		if got := len(ConnNotes([]result.Record{r})) > 0; got != tc.want {
			t.Errorf("pool:auto:2:8 with %d connections seen: got a note %v, want %v", tc.observed, got, tc.want)
		}
	}
}

// TestPoolLibrary: each stack's trap and bottleneck advice names that
// stack's pool, not Go's.
func TestPoolLibrary(t *testing.T) {
	for lang, want := range map[string]string{
		"go": "github.com/rpclab/rpclab/pool", "cpp": "clients/cpp/pool", "java": "io.rpclab.pool.ChannelPool",
		"rust": "rpclab-pool crate", "python": "rpclab_pool.ChannelPool", "node": "@rpclab/grpc-pool",
	} {
		if got := PoolLibrary(lang); !strings.Contains(got, want) {
			t.Errorf("PoolLibrary(%q) = %q, want it to name %q", lang, got, want)
		}
		r := result.Record{Spec: result.Spec{ConnMode: "channel-per-worker"}, Env: result.Env{Language: lang}}
		if got := TrapWhy(&r); !strings.Contains(got, want) {
			t.Errorf("TrapWhy for %s: %q lacks %q", lang, got, want)
		}
	}
}
