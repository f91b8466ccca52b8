// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/doctor"
	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/report"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/server"
)

const defaultTestTimeout = 30 * time.Second

func startServer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// TestDoctorSharedUnderCap: against rpclab's server with a rate cap every
// layout reaches the cap, so a pool gains nothing: the verdict must be that
// the shared connection is not the bottleneck, and no step may exceed the
// rate or in-flight cap.
func TestDoctorSharedUnderCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
	defer cancel()
	const maxRPS, maxInflight = 400, 4
	d, err := doctor.Run(ctx, doctor.Options{
		Target: startServer(t), Budget: 6 * time.Second, MaxRPS: maxRPS, MaxInflight: maxInflight,
		Pools: []int{2}, Warmup: 100 * time.Millisecond, Interval: 400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Shared.Best == nil || len(d.Pools) != 1 || d.Pools[0].Best == nil {
		t.Fatalf("got shared %v and pools %v, want a best step for each", d.Shared.Best, d.Pools)
	}
	if d.Bottleneck || d.Recommended != nil {
		t.Errorf("got bottleneck %v (gain %.2f), want the shared connection not to be the bottleneck", d.Bottleneck, d.Gain)
	}
	if !d.Capped {
		t.Errorf("got Capped false, want true (the rate cap stopped the layouts)")
	}
	for _, r := range d.Records {
		if r.Spec.Inflight > maxInflight {
			t.Errorf("got a step at in-flight %d, want at most %d", r.Spec.Inflight, maxInflight)
		}
		// A worker's first call is not held back, hence the small slack.
		if r.ThroughputRPS > 1.1*maxRPS {
			t.Errorf("got %.0f req/s at %s in-flight %d, want at most %d", r.ThroughputRPS, r.Spec.ConnMode, r.Spec.Inflight, maxRPS)
		}
		if r.Status != result.StatusOK || r.Spec.LoadModel != "closed" {
			t.Errorf("got status %q load model %q, want ok closed", r.Status, r.Spec.LoadModel)
		}
	}
	var out bytes.Buffer
	report.DoctorText(&out, d)
	for _, want := range []string{"shared", "pool:2", "NOT the bottleneck", "cap"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verdict lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDoctorBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
	defer cancel()
	tests := []struct {
		name string
		o    doctor.Options
	}{
		{"no target", doctor.Options{}},
		{"negative rps", doctor.Options{Target: "127.0.0.1:1", MaxRPS: -1}},
		{"negative inflight", doctor.Options{Target: "127.0.0.1:1", MaxInflight: -2}},
	}
	for _, tc := range tests {
		var ue *loadgen.UsageError
		if _, err := doctor.Run(ctx, tc.o); !errors.As(err, &ue) {
			t.Errorf("%s: got %v, want a *loadgen.UsageError", tc.name, err)
		}
	}
	// A closed port: a clear error, not a hang.
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis.Addr().String()
	lis.Close()
	_, err := doctor.Run(ctx, doctor.Options{Target: addr, DialTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("got %v, want an unreachable-target error", err)
	}
}
