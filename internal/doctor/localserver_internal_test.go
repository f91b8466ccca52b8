// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// TestFillServerCPU: a local server's CPU read around a step becomes the
// record's server_cpu, marked as read from the OS and scaled to the
// interval; a record that carries the server's own figure keeps it.
func TestFillServerCPU(t *testing.T) {
	l := &LocalServer{PID: 1, CPUs: 2}
	t0 := time.Unix(100, 0)
	from, to := cpuMark{cpu: time.Second, wall: t0}, cpuMark{cpu: 3 * time.Second, wall: t0.Add(2 * time.Second)}
	rec := &result.Record{DurationNS: int64(time.Second), Requests: 1000}
	l.fill(rec, from, to)
	sc := rec.ServerCPU
	// 2 s of CPU over 2 s on 2 CPUs: half of them busy; over the 1 s
	// interval, 1 s of CPU, 1 ms an RPC.
	if sc == nil || sc.Source != "os" || sc.Busy != 0.5 || sc.CPUNS != int64(time.Second) || sc.CPUNSPerRPC != 1e6 || sc.CPUs != 2 {
		t.Errorf("got %+v, want busy 0.5, 1 s of CPU, 1 ms an RPC, read from the OS", sc)
	}
	own := &result.ServerCPU{Busy: 0.1, CPUs: 4}
	rec = &result.Record{DurationNS: int64(time.Second), Requests: 1000, ServerCPU: own}
	l.fill(rec, from, to)
	if rec.ServerCPU != own {
		t.Errorf("got %+v, want the server's own figure kept", rec.ServerCPU)
	}
}
