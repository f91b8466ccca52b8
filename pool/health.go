// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"time"

	"google.golang.org/grpc/connectivity"
)

// watch follows c, the connection of slot s, until the pool closes, the
// adaptive pool drops s, or c is replaced. It caches c's state for the picker, reconnects an idle
// connection in eager mode, and replaces c when it was shut down by someone
// else or stayed out of READY, after a TRANSIENT_FAILURE, for the slot's
// re-dial delay.
func (p *Pool) watch(s *slot, c *conn) {
	defer p.wg.Done()
	var deadline time.Time // when c is replaced unless it gets READY first
	st := c.cc.GetState()
	for {
		c.state.Store(int32(st))
		switch st {
		case connectivity.Ready:
			deadline = time.Time{}
			s.delay = p.cfg.redialAfter
		case connectivity.Idle:
			if !p.cfg.lazy {
				c.cc.Connect()
			}
		case connectivity.TransientFailure:
			if deadline.IsZero() {
				deadline = time.Now().Add(s.delay)
			}
		case connectivity.Shutdown:
			if s.ctx.Err() != nil || c.retired.Load() {
				return
			}
			if p.replace(s, c, "shut down outside the pool") {
				return
			}
			// The new connection could not be created: wait and retry.
			if !sleep(s.ctx, s.delay) {
				return
			}
			continue
		}

		wctx, cancel := s.ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			wctx, cancel = context.WithDeadline(s.ctx, deadline)
		}
		changed := c.cc.WaitForStateChange(wctx, st)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if !changed {
			// Out of READY for the whole delay since a failure.
			s.delay = min(2*s.delay, maxRedialAfter)
			if p.replace(s, c, "in TRANSIENT_FAILURE") {
				return
			}
			deadline = time.Now().Add(s.delay)
		}
		st = c.cc.GetState()
	}
}

// replace puts a new connection in slot s in place of old, starts its
// watcher and retires old. It reports false, leaving old in place, when
// the pool is closing, s was dropped, or the new ClientConn could not be
// created.
func (p *Pool) replace(s *slot, old *conn, why string) bool {
	c, err := p.dial()
	if err != nil {
		p.cfg.logger.Warn("pool: re-create connection", "target", p.target, "conn", s.id, "reason", why, "err", err)
		return false
	}
	p.mu.Lock()
	if p.closed.Load() || s.ctx.Err() != nil {
		p.mu.Unlock()
		_ = c.close()
		return false
	}
	p.retired[old] = struct{}{}
	c.id = s.id
	s.cur.Store(c)
	s.redials.Add(1)
	if !p.cfg.lazy {
		c.cc.Connect()
	}
	p.wg.Add(1)
	go p.watch(s, c)
	p.mu.Unlock()
	p.met.redialed()
	old.retire()
	p.cfg.logger.Info("pool: re-created connection", "target", p.target, "conn", s.id, "reason", why, "redials", s.redials.Load())
	return true
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
