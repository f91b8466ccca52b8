// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// TestClientBusyOnWorkers: a record of a sweep on workers counts the
// CPUs of the workers that reported (env is the driver's), not the
// driver's host.
func TestClientBusyOnWorkers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers []result.WorkerShare
		want    float64
	}{
		{"one machine: the host's 2 CPUs", nil, 2},
		{"two workers of 4 cores", []result.WorkerShare{{Status: "ok", Cores: 4}, {Status: "ok", Cores: 4}}, 0.5},
		{"a lost worker's cores not counted", []result.WorkerShare{{Status: "ok", Cores: 4}, {Status: "lost", Cores: 4}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Record{DurationNS: 1e9, ClientCPUNS: 4e9, Workers: tc.workers}
			r.Env.HostCPUs = 2
			if got := ClientBusy(r); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
