// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// closeDrain is how long Close lets RPCs in flight finish.
const closeDrain = 5 * time.Second

// Close is Shutdown with a drain of 5 seconds: new RPCs fail with
// ErrClosed at once, RPCs and streams in flight may finish for up to 5
// seconds, then those left are cancelled and every connection is closed.
// It returns the connections' close errors joined (RPCs cancelled at the
// end of the drain are not an error of Close's), and ErrClosed if the pool
// was already closed or shut down. It never panics.
func (p *Pool) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeDrain)
	defer cancel()
	_, err := p.shutdown(ctx)
	return err
}

// Shutdown closes the pool gracefully, as net/http's Server.Shutdown
// closes a server: the pool stops taking RPCs at once (Invoke, NewStream
// and Connect return ErrClosed from then on), then waits until no RPC or
// stream is in flight or ctx ends, whichever is first. RPCs and streams
// still in flight when ctx ends are cancelled: they end with code
// Canceled (grpc-go's "the client connection is closing"), except that a
// stream whose transport grpc-go tears down before the stream sees the
// close, or on a connection the server had already sent GOAWAY on, ends
// Unavailable ("transport is closing").
// Every connection, including replaced ones, is then closed, all at once.
// A ctx already done (or without time left) cancels what is in flight at
// once; context.Background() waits for every RPC to end, however long.
//
// Shutdown returns ctx's error when RPCs were cancelled, joined with the
// connections' close errors, and ErrClosed if the pool was already closed
// or shut down. The pool's goroutines have ended when it returns.
func (p *Pool) Shutdown(ctx context.Context) error {
	cut, err := p.shutdown(ctx)
	if cut {
		return errors.Join(ctx.Err(), err)
	}
	return err
}

// shutdown is Shutdown; cut reports that RPCs were still in flight when
// ctx ended.
func (p *Pool) shutdown(ctx context.Context) (cut bool, err error) {
	if !p.closed.CompareAndSwap(false, true) {
		return false, ErrClosed
	}
	// The watchers, the control loop and the retirer stop: nothing is
	// re-dialled, grown or retired while the pool drains.
	p.cancel()
	// A barrier: a replacement in progress finishes registering first.
	p.mu.Lock()
	//lint:ignore SA2001 the empty section is the barrier
	p.mu.Unlock()
	p.wg.Wait()
	cut = !p.drain(ctx)
	err = p.closeAll()
	p.met.sized(-len(p.list()))
	p.met.unregister()
	return cut, err
}

// drain waits until no RPC is in flight on any connection, current or
// replaced, and reports true, or reports false when ctx ends first. An RPC
// increments its connection's count before it checks closed, and drain
// reads the counts after closed is set, so every RPC that starts is either
// seen here or refused with ErrClosed; the last RPC to leave a connection
// wakes drain (conn.leave).
func (p *Pool) drain(ctx context.Context) bool {
	for p.inFlightAll() > 0 {
		select {
		case <-p.drained:
		case <-ctx.Done():
			return p.inFlightAll() == 0
		}
	}
	return true
}

// inFlightAll is the RPCs in flight on every connection, current or
// replaced.
func (p *Pool) inFlightAll() int64 {
	var n int64
	for _, c := range p.allConns() {
		n += c.inflight.Load()
	}
	return n
}

// allConns is the current connections and the replaced ones not yet
// closed.
func (p *Pool) allConns() []*conn {
	var cs []*conn
	for _, s := range p.list() {
		cs = append(cs, s.cur.Load())
	}
	p.mu.Lock()
	for c := range p.retired {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	return cs
}

// closeAll closes every connection at once, so that closing many takes
// about as long as closing one, and joins their errors. grpc-go ends the
// RPCs still on them with code Canceled.
func (p *Pool) closeAll() error {
	cs := p.allConns()
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.close(); err != nil && !errors.Is(err, errAlreadyClosing) {
				errs[i] = fmt.Errorf("pool: close connection %d to %s: %w", c.id, p.target, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// wakeDrain wakes a draining Shutdown, without blocking.
func (p *Pool) wakeDrain() {
	select {
	case p.drained <- struct{}{}:
	default:
	}
}
