// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"net"
	"sync"
	"time"
)

// SetWrapListener replaces how StartBulk wraps its listeners until the
// returned function restores it.
func SetWrapListener(f func(net.Listener) net.Listener) (restore func()) {
	old := wrapListener
	wrapListener = f
	return func() { wrapListener = old }
}

// FakeClock is a clock whose timers fire when the test says.
type FakeClock struct {
	Started chan time.Duration // each timer's duration, as it starts
	fire    chan struct{}
}

// NewFakeClock returns a FakeClock that reports up to n timers started.
func NewFakeClock(n int) *FakeClock {
	return &FakeClock{Started: make(chan time.Duration, n), fire: make(chan struct{})}
}

// Fire runs every timer started and not stopped, now and from now on.
func (c *FakeClock) Fire() { close(c.fire) }

func (c *FakeClock) afterFunc(d time.Duration, f func()) func() bool {
	stopped := make(chan struct{})
	go func() {
		select {
		case <-c.fire:
			f()
		case <-stopped:
		}
	}()
	select {
	case c.Started <- d:
	default:
	}
	var once sync.Once
	return func() bool {
		done := false
		once.Do(func() { close(stopped); done = true })
		return done
	}
}

// WithClock makes the sidechannel registry's timers c's.
func WithClock(c *FakeClock) BulkOption {
	return func(cfg *bulkConfig) error {
		cfg.clock = c
		return nil
	}
}

// PendingSidechannels is the number of sidechannel tokens waiting.
func (b *Bulk) PendingSidechannels() int { return b.sc.pending() }
