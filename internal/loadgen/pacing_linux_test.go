// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestPrecisePacingArmsTheKernelTimer checks that each precise wait still
// to come arms the kernel timer once, for its time, and that one already
// due arms nothing; every wait ends at or after its time.
func TestPrecisePacingArmsTheKernelTimer(t *testing.T) {
	var armed []time.Duration
	orig := armTimer
	defer func() { armTimer = orig }()
	armTimer = func(fd int, spec *unix.ItimerSpec) error {
		armed = append(armed, time.Duration(spec.Value.Nano()))
		return unix.TimerfdSettime(fd, 0, spec, nil)
	}
	wait := preciseWait(t)
	ctx := testutil.Context(t)
	for _, d := range []time.Duration{3 * time.Millisecond, 300 * time.Microsecond, 20 * time.Microsecond} {
		armed = armed[:0]
		at := time.Now().Add(d)
		if !wait(ctx, at) {
			t.Fatalf("a %v wait returned false", d)
		}
		if early := time.Until(at); early > 0 {
			t.Errorf("a %v wait ended %v early", d, early)
		}
		if len(armed) != 1 || armed[0] > d || armed[0] <= 0 {
			t.Errorf("a %v wait armed the kernel timer for %v, want once, for at most %v", d, armed, d)
		}
	}
	armed = armed[:0]
	if !wait(ctx, time.Now().Add(-time.Millisecond)) || len(armed) != 0 {
		t.Errorf("a wait already due armed the kernel timer %d times, want none", len(armed))
	}
}

// TestPrecisePacingWakesAnIdleClient waits 300 µs twenty times in an
// otherwise idle process: with a Go timer alone each takes about 1 ms (the
// netpoller waits in whole milliseconds), with the kernel timer armed
// most end within tens of µs. The bound, half of them within 900 µs in
// one of three tries, tells the two apart on a loaded machine; it is not
// a measure of speed.
func TestPrecisePacingWakesAnIdleClient(t *testing.T) {
	wait := preciseWait(t)
	ctx := testutil.Context(t)
	var fast int
	for range 3 {
		fast = 0
		for range 20 {
			start := time.Now()
			wait(ctx, start.Add(300*time.Microsecond))
			if time.Since(start) < 900*time.Microsecond {
				fast++
			}
		}
		if fast >= 10 {
			return
		}
	}
	t.Fatalf("%d of 20 waits of 300 µs ended within 900 µs, want at least 10", fast)
}

// preciseWait is the wait of wallClock(PrecisePacing), released when t
// ends; it fails t where the kernel timer cannot be had.
func preciseWait(t *testing.T) func(context.Context, time.Time) bool {
	t.Helper()
	clk, pacing, release := wallClock(PrecisePacing)
	t.Cleanup(release)
	if pacing != PrecisePacing {
		t.Fatalf("wallClock(precise) runs %q: no kernel timer on Linux", pacing)
	}
	return clk.sleepUntil
}
