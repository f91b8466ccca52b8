// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"net"
	"sync"
	"time"

	"github.com/rpclab/rpclab/sidechannel"
)

// SetWrapListener replaces how StartBulk wraps its listeners until the
// returned function restores it.
func SetWrapListener(f func(net.Listener) net.Listener) (restore func()) {
	old := wrapListener
	wrapListener = f
	return func() { wrapListener = old }
}

// Clock is a clock the test moves; the sidechannel's ids expire by it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at the real time.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock d forward.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// WithClock makes the sidechannel's ids expire by c.
func WithClock(c *Clock) BulkOption {
	return func(cfg *bulkConfig) error {
		cfg.sidechannel = append(cfg.sidechannel, sidechannel.WithClock(c.Now))
		return nil
	}
}

// PendingSidechannels is the number of sidechannel ids waiting for their
// other half.
func (b *Bulk) PendingSidechannels() int {
	if sc := b.sc.Load(); sc != nil {
		return sc.Pending()
	}
	return 0
}
