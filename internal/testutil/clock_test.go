// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"slices"
	"testing"
	"time"
)

// TestFakeClock: time moves only by Advance, Set (forward only) and
// SleepUntil (forward only, every sleep recorded).
func TestFakeClock(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	c := NewFakeClock(t0)
	c.Advance(time.Second)
	c.SleepUntil(t0.Add(3 * time.Second))
	c.SleepUntil(t0) // a wake time in the past: recorded, the clock stays
	c.Set(t0.Add(2 * time.Second))
	if got, want := c.Now(), t0.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("Now: got %v, want %v", got, want)
	}
	if got, want := c.Sleeps(), []time.Time{t0.Add(3 * time.Second), t0}; !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("Sleeps: got %v, want %v", got, want)
	}
}
