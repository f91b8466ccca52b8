// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPrecisePacingChoosesTheKernelSleep checks which wait precise pacing
// uses: a wait of nanosleepMin or more sleeps in the kernel (and hands
// only its last part, if any, to the timer); a shorter one never does.
func TestPrecisePacingChoosesTheKernelSleep(t *testing.T) {
	tests := []struct {
		name      string
		wait      time.Duration
		wantSleep bool
	}{
		{"long wait sleeps in the kernel", 3 * time.Millisecond, true},
		{"above the edge sleeps in the kernel", nanosleepMin + time.Millisecond, true},
		{"short wait uses the timer", nanosleepMin / 3, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sleeps := 0
			nanosleep = func(ts *unix.Timespec, left *unix.Timespec) error {
				sleeps++
				return unix.Nanosleep(ts, left)
			}
			defer func() { nanosleep = unix.Nanosleep }()
			timers := 0
			timerWait := func(ctx context.Context, at time.Time) bool {
				timers++
				time.Sleep(time.Until(at))
				return true
			}
			ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
			defer cancel()
			if !precisePacing(timerWait)(ctx, time.Now().Add(tc.wait)) {
				t.Fatal("got a cancelled wait, want it to end at its time")
			}
			if got := sleeps > 0; got != tc.wantSleep {
				t.Errorf("got %d kernel sleeps (and %d timer waits) for a %v wait, want kernel sleep %v", sleeps, timers, tc.wait, tc.wantSleep)
			}
			if !tc.wantSleep && timers != 1 {
				t.Errorf("got %d timer waits for a %v wait, want 1", timers, tc.wait)
			}
		})
	}
}
