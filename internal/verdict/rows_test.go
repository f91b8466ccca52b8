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

// TestBase: a run's ideal line starts from its shared layout's in-flight-1
// step, else from the first in-flight-1 step with throughput; a step with
// none, or at another in-flight count, never.
func TestBase(t *testing.T) {
	rowsOf := func(recs ...result.Record) []*Row {
		var out []*Row
		for i := range recs {
			out = append(out, &Row{Rec: &recs[i]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		rows []*Row
		want int // index into rows, -1 for nil
	}{
		{"shared wins over an earlier pool", rowsOf(rec("pool:4", 1, 900), rec("shared", 2, 1500), rec("shared", 1, 800)), 2},
		{"no shared: the first in-flight-1 step", rowsOf(rec("pool:2", 4, 900), rec("pool:2", 1, 500), rec("pool:4", 1, 600)), 1},
		{"a failed in-flight-1 step is skipped", rowsOf(rec("shared", 1, 0), rec("pool:2", 1, 500)), 1},
		{"no in-flight-1 step", rowsOf(rec("shared", 2, 900)), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Base(tc.rows)
			if tc.want < 0 {
				if got != nil {
					t.Errorf("got %+v, want none", got.Rec.Spec)
				}
				return
			}
			if got != tc.rows[tc.want] {
				t.Errorf("got %v, want row %d", got, tc.want)
			}
		})
	}
}
