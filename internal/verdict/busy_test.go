// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// other gives r the host's CPU over its interval with other work taking
// share of its client's CPU 0 (beside what the client used itself), the
// server pinned apart on CPU 1 (and not reporting its CPU).
func other(r result.Record, share float64) result.Record {
	d := r.DurationNS
	busy := r.ClientCPUNS + int64(share*float64(d))
	r.HostCPU = &result.HostCPU{
		Client: result.CPUTimes{CPUs: []int{0}, BusyNS: busy, IdleNS: d - busy},
		Server: &result.CPUTimes{CPUs: []int{1}, BusyNS: d / 2, IdleNS: d / 2},
		Host:   result.CPUTimes{CPUs: []int{0, 1}, BusyNS: busy + d/2, IdleNS: 2*d - busy - d/2},
	}
	return r
}

// local is other's record with no server pinned apart: a server on this
// host (the record's loopback target) that does not report its CPU.
func local(r result.Record, share float64) result.Record {
	r = other(r, share)
	r.HostCPU.Server = nil
	return r
}

// apart gives r a client on CPU 0 and a server on CPU 1, other work
// taking client and server of each.
func apart(r result.Record, client, server float64) result.Record {
	d := r.DurationNS
	r.ServerCPU = &result.ServerCPU{CPUNS: d / 2, CPUs: 1, Busy: 0.5}
	cb, sb := r.ClientCPUNS+int64(client*float64(d)), d/2+int64(server*float64(d))
	r.HostCPU = &result.HostCPU{
		Client: result.CPUTimes{CPUs: []int{0}, BusyNS: cb, IdleNS: d - cb},
		Server: &result.CPUTimes{CPUs: []int{1}, BusyNS: sb, IdleNS: d - sb},
		Host:   result.CPUTimes{CPUs: []int{0, 1}, BusyNS: cb + sb, IdleNS: 2*d - cb - sb},
	}
	return r
}

func TestOtherWork(t *testing.T) {
	base := busy(rec("shared", 8, 1000), 0.5) // the client used half its CPU
	unpinned := base
	unpinned.ServerCPU = &result.ServerCPU{CPUNS: 3e8, CPUs: 2}
	unpinned.HostCPU = &result.HostCPU{
		Client: result.CPUTimes{CPUs: []int{0, 1}, BusyNS: 1.2e9, IdleNS: 0.7e9, StealNS: 1e8},
		Host:   result.CPUTimes{CPUs: []int{0, 1}, BusyNS: 1.2e9, IdleNS: 0.7e9, StealNS: 1e8},
	}
	workers := base
	workers.Spec.Target = "10.0.0.9:50051"
	workers.Workers = []result.WorkerShare{
		{Addr: "10.0.0.5:10000", Status: "ok", Cores: 2, CPUNS: 4e8, HostCPU: &result.CPUTimes{CPUs: []int{0, 1}, BusyNS: 1.2e9, IdleNS: 0.8e9}},
		{Addr: "10.0.0.6:10000", Status: "ok", Cores: 2, CPUNS: 4e8, HostCPU: &result.CPUTimes{CPUs: []int{0, 1}, BusyNS: 5e8, IdleNS: 1.4e9, StealNS: 1e8}},
		{Addr: "10.0.0.7:10000", Status: "ok", Cores: 2, CPUNS: 4e8}, // an official worker
	}
	workersLocal := workers
	workersLocal.Spec.Target = "127.0.0.1:50051"
	remote := local(base, 0.3)
	remote.Spec.Target = "dns:///db.example.com:2135"
	netem := apart(base, 0.41, 0.38)
	netem.Spec.Netem = &result.NetemSpec{Upstream: "127.0.0.1:1"}
	netemUnpinned := unpinned
	netemUnpinned.Spec.Netem = netem.Spec.Netem
	if b := Busy([]*result.Record{&workers}); b == nil || !strings.Contains(b.Text(), "Other processes took 40% of CPUs 0-1 (worker 10.0.0.5:10000's) during the step at in-flight 8,") {
		t.Errorf("workers: got %+v, want worker 10.0.0.5:10000's CPUs named", b)
	}
	for _, tc := range []struct {
		name string
		r    result.Record
		want []OtherCPU
	}{
		{"no host_cpu", base, nil},
		{"a remote server that does not report its CPU", remote, []OtherCPU{{[]int{0}, "the client's", 0.3}}},
		// A server on this host that does not report its CPU cannot be
		// told from other work.
		{"a local server that does not report its CPU", local(base, 0.3), nil},
		{"a server pinned apart that does not report its CPU", other(base, 0.3), []OtherCPU{{[]int{0}, "the client's", 0.3}}},
		// 1.2 s busy - 0.5 s client - 0.3 s server + 0.1 s steal, of 2 s.
		{"unpinned, the server's CPU subtracted, steal added", unpinned, []OtherCPU{{[]int{0, 1}, "the client's and the server's", 0.25}}},
		{"pinned apart", apart(base, 0.41, 0.38), []OtherCPU{{[]int{0}, "the client's", 0.41}, {[]int{1}, "the server's", 0.38}}},
		// (1.2 s - 0.4 s) of 2 s; (0.5 s - 0.4 s + 0.1 s) of 2 s.
		{"a sweep on workers", workers, []OtherCPU{{[]int{0, 1}, "worker 10.0.0.5:10000's", 0.4}, {[]int{0, 1}, "worker 10.0.0.6:10000's", 0.1}}},
		{"a sweep on workers against a server beside them", workersLocal, nil},
		// lab pins the netem proxy beside the server: only the client's
		// side is judged; unpinned, neither.
		{"netem, pinned apart", netem, []OtherCPU{{[]int{0}, "the client's", 0.41}}},
		{"netem, unpinned", netemUnpinned, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OtherWork(&tc.r)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if cpuList(g.CPUs) != cpuList(w.CPUs) || g.Whose != w.Whose || g.Share < w.Share-1e-9 || g.Share > w.Share+1e-9 {
					t.Errorf("got %+v, want %+v", g, w)
				}
			}
		})
	}
}

// TestBusyHostVerdict: other work above OtherWorkShare is said first,
// names the CPUs and in-flight counts, and no rule resting on idle CPU
// fires on those steps.
func TestBusyHostVerdict(t *testing.T) {
	flat := func() []result.Record { return sweep(1000, 1000, FlatEfficiency-0.01, FlatEfficiency-0.01) }
	each := func(recs []result.Record, f func(result.Record) result.Record, counts ...int) []result.Record {
		for i := range recs {
			for _, n := range counts {
				if recs[i].Spec.Inflight == n {
					recs[i] = f(recs[i])
				}
			}
		}
		return recs
	}
	for _, tc := range []struct {
		name      string
		recs      []result.Record
		want      Kind
		rule      Kind
		text, not string
	}{
		{"client full on a busy CPU", each(flat(), func(r result.Record) result.Record { return other(busy(r, ClientCPUBusy), 0.3) }, 32),
			BusyHost, ClientCPUBound, "Other processes took 30% of CPU 0 (the client's) during the step at in-flight 32", "The client's own CPU is the limit"},
		{"server idle, both sides busy", each(flat(), func(r result.Record) result.Record { return apart(r, 0.41, 0.38) }, 16, 32),
			BusyHost, NotServer, "Other processes took 41% of CPU 0 (the client's) and 38% of CPU 1 (the server's) during the steps at in-flight 16-32, more than the 25% a step may lose to other work: these figures are not the client's or the server's; measure again on a quiet machine.", "not the server's CPU"},
		{"a bottleneck on a busy host", each(sweep(1000, 1000, 0.6, 0.6*BottleneckRatio), func(r result.Record) result.Record { return other(r, 0.5) }, 1),
			BusyHost, ConnBottleneck, "What the rules read from these figures: go unary, in-flight 32", ""},
		{"a trap on a busy host", each(append(flat(), trapped(32)), func(r result.Record) result.Record { return other(busy(r, ClientCPUBusy), 0.3) }, 32),
			Trap, "", "Other processes took 30% of CPU 0 (the client's) during the step at in-flight 32", "The client's own CPU is the limit"},
		{"quiet", each(flat(), func(r result.Record) result.Record { return other(r, 0.02) }, 1, 16, 32),
			BoundElsewhere, "", "Every layout flattens together", "Other processes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(tc.recs)
			if len(vs) != 1 {
				t.Fatalf("got %d verdicts, want 1", len(vs))
			}
			v := vs[0]
			if v.Kind != tc.want || v.Rule != tc.rule || !strings.Contains(v.Text, tc.text) || (tc.not != "" && strings.Contains(v.Text, tc.not)) {
				t.Errorf("got %s (rule %q): %q; want %s (rule %q) containing %q, without %q", v.Kind, v.Rule, v.Text, tc.want, tc.rule, tc.text, tc.not)
			}
			if tc.want == BusyHost && !strings.HasPrefix(v.Text, "Other processes took") {
				t.Errorf("got %q, want the busy host said first", v.Text)
			}
		})
	}
}

// trapped is a per-worker layout at in-flight n that asked for n
// connections and got one.
func trapped(n int) result.Record {
	r := rec("per-worker", n, 15000)
	r.ConnsObserved = 1
	return r
}
