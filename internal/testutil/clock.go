// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"slices"
	"sync"
	"time"
)

// FakeClock is the tests' one fake clock, an "infinitely fast CPU" (as
// grpc-go's benchmark/latency tests have it): time moves only when the test
// advances it or the code under test sleeps, a sleep moving it to the wake
// time at once and being recorded. Code under test takes its Now and
// SleepUntil where it would read the time and sleep. Safe for concurrent
// use. (The pool, a module of its own, keeps its own.)
type FakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Time
}

// NewFakeClock is a FakeClock at start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{t: start} }

// Now is the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d, as if the code under test spent it.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t, if t is later than its time.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// SleepUntil records a sleep until t and moves the clock there at once (a
// sleep into the past leaves it).
func (c *FakeClock) SleepUntil(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, t)
	if t.After(c.t) {
		c.t = t
	}
}

// Sleeps is every wake time SleepUntil was given, in order.
func (c *FakeClock) Sleeps() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}
