// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

func TestHostCPU(t *testing.T) {
	ms := time.Millisecond
	s0 := &procstat.CPUStat{PerCPU: map[int]procstat.CPUTimes{0: {Busy: 100 * ms}, 1: {Busy: 100 * ms}, 2: {}}}
	s1 := &procstat.CPUStat{PerCPU: map[int]procstat.CPUTimes{0: {Busy: 400 * ms, Idle: 600 * ms}, 1: {Busy: 200 * ms, Idle: 800 * ms, Steal: 10 * ms}, 2: {Idle: time.Second}}}
	ns := func(d time.Duration) int64 { return int64(d) }
	for _, tc := range []struct {
		name           string
		client, server []int
		want           *result.HostCPU
	}{
		{"pinned apart", []int{0}, []int{1}, &result.HostCPU{
			Client: result.CPUTimes{CPUs: []int{0}, BusyNS: ns(300 * ms), IdleNS: ns(600 * ms)},
			Server: &result.CPUTimes{CPUs: []int{1}, BusyNS: ns(100 * ms), IdleNS: ns(800 * ms), StealNS: ns(10 * ms)},
			Host:   result.CPUTimes{CPUs: []int{0, 1, 2}, BusyNS: ns(400 * ms), IdleNS: ns(2400 * ms), StealNS: ns(10 * ms)},
		}},
		{"unpinned: the client's CPUs are the host's", nil, nil, &result.HostCPU{
			Client: result.CPUTimes{CPUs: []int{0, 1, 2}, BusyNS: ns(400 * ms), IdleNS: ns(2400 * ms), StealNS: ns(10 * ms)},
			Host:   result.CPUTimes{CPUs: []int{0, 1, 2}, BusyNS: ns(400 * ms), IdleNS: ns(2400 * ms), StealNS: ns(10 * ms)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := json.Marshal(HostCPU(s0, s1, tc.client, tc.server))
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	if h := HostCPU(nil, s1, nil, nil); h != nil {
		t.Errorf("got %+v without a first read, want nil", h)
	}
}

// TestStepsCarryHostCPU: a closed-loop and an open-loop step against a
// real server record the host's CPU over their interval, on the CPUs the
// client and the server were said to be pinned to.
func TestStepsCarryHostCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/stat is Linux's")
	}
	cpus, err := procstat.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{ClientCPUs: cpus[:1], ServerCPUs: cpus[len(cpus)-1:]}
	ctx := testutil.Context(t)
	spec := shortSpec(testutil.Serve(t, server.New(server.Options{})))
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	closed, err := RunStep(ctx, spec, step, o)
	if err != nil {
		t.Fatal(err)
	}
	open, err := RunOpenStep(ctx, spec, step, OpenSpec{Rates: []float64{200}, OpenLoop: OpenLoop{Arrival: Constant, MaxOutstanding: DefaultMaxOutstanding}}, 200, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*result.Record{closed, open} {
		h := r.HostCPU
		if h == nil || h.Server == nil {
			t.Fatalf("%s loop: got host_cpu %+v, want the client's, the server's and the host's", r.Spec.LoadModel, h)
		}
		if !slices.Equal(h.Client.CPUs, o.ClientCPUs) || !slices.Equal(h.Server.CPUs, o.ServerCPUs) || len(h.Host.CPUs) < len(cpus) {
			t.Errorf("%s loop: got CPUs %v, %v, %v; want %v, %v and every CPU", r.Spec.LoadModel, h.Client.CPUs, h.Server.CPUs, h.Host.CPUs, o.ClientCPUs, o.ServerCPUs)
		}
		// The kernel counts whole ticks: the host's time over the interval
		// is its duration times its CPUs, to a tick or two per CPU.
		if total := h.Host.BusyNS + h.Host.IdleNS + h.Host.StealNS; total <= 0 || h.Host.BusyNS < h.Client.BusyNS {
			t.Errorf("%s loop: got host %+v, client %+v; want time counted, the host's busy at least the client's", r.Spec.LoadModel, h.Host, h.Client)
		}
		b, _ := json.Marshal(r)
		if err := result.Validate(b); err != nil {
			t.Errorf("%s loop: %v", r.Spec.LoadModel, err)
		}
	}
}
