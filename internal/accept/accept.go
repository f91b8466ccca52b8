// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package accept is the accept loop rpclab's raw listeners share (the bulk
// TCP listener of package server, netem's proxy): one
// failed Accept (too many open files, a connection aborted before it was
// accepted) must not end a listener, as it does not end net/http's.
package accept

import (
	"errors"
	"net"
	"time"
)

// Backoff bounds: after a failed Accept, wait MinBackoff, doubling after
// each further failure up to MaxBackoff, as net/http's Server.Serve does
// (5 ms to 1 s): long enough for a process out of file descriptors to close
// some, short enough that a listener serves again at once after.
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// Next returns lis's next connection. An error that ends the listener
// (net.ErrClosed) is returned; after any other one it waits (MinBackoff
// doubling to MaxBackoff) and accepts again, calling retry (if not nil)
// with the error first. It returns net.ErrClosed when done closes while it
// waits.
func Next(lis net.Listener, done <-chan struct{}, retry func(error)) (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := lis.Accept()
		if err == nil {
			return c, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if retry != nil {
			retry(err)
		}
		wait = min(max(2*wait, MinBackoff), MaxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}
