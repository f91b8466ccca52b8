// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// epoch anchors mono: time.Since reads the monotonic clock.
var epoch = time.Now()

// mono is nanoseconds on the monotonic clock since epoch, never 0 (0 means
// "none" in the meter's fields).
func mono() int64 { return int64(time.Since(epoch)) + 1 }

// writeMeter measures how long RPCs wait inside the client before the
// bytes of their connection reach the socket.
//
// grpc-go queues an RPC's frames for the connection's writer goroutine,
// which batches whatever is queued into one socket write; its stats
// handler's "sent" event fires at queueing, not at the write. So the meter
// sits on both ends: pick stamps the start of the oldest RPC not yet
// followed by a write (queued), and the wrapped net.Conn takes that stamp
// at the start of each Write and adds the wait. While a Write blocks (the
// peer does not read, the socket buffer is full) no later Write starts, so
// the stamp ages; sample reports that age too. The wait is a lower bound
// on an RPC's wait for its own bytes (the write that clears the stamp may
// carry only earlier RPCs' frames) and an upper bound on the wait of
// everything the write carried. Every field is an atomic: no lock, no
// allocation on the RPC path or the write path.
type writeMeter struct {
	queuedSince atomic.Int64 // mono of the oldest unwritten RPC start; 0 none
	writing     atomic.Int64 // mono when the Write in progress began; 0 none
	waitSum     atomic.Int64 // ns waited, over the writes that cleared a stamp
	waits       atomic.Int64 // writes that cleared a stamp
	// dialed reports that the meter's dialer made the connection, so its
	// writes reach the meter. A grpc.WithContextDialer of the caller's
	// replaces it: then no write clears a stamp, which would age for as
	// long as RPCs stay in flight and read as a connection that is always
	// the limit (under peers' emulated links it read 135 s), so the meter
	// reports no wait at all.
	dialed atomic.Bool
	// dial is the caller's dialer (WithDialer) the meter wraps; nil: TCP,
	// or a Unix socket.
	dial func(context.Context, string) (net.Conn, error)
	// The sampler's previous totals; only the control loop touches them.
	lastSum, lastWaits int64
}

// queued notes that an RPC started on the connection now: the stamp of
// the oldest RPC not yet followed by a write. While one is set, later RPCs
// read no clock.
func (m *writeMeter) queued() {
	if m.queuedSince.Load() == 0 {
		m.queuedAt(mono())
	}
}

// queuedAt notes that an RPC started on the connection at t (mono).
func (m *writeMeter) queuedAt(t int64) {
	if m.queuedSince.Load() == 0 {
		m.queuedSince.CompareAndSwap(0, t)
	}
}

// wrote notes the start of a socket write at t.
func (m *writeMeter) wrote(t int64) {
	m.writing.Store(t)
	// A stamp newer than this write's start is an RPC queued while it
	// began (the transport writing a frame of its own): its bytes go in a
	// later write, which clears it.
	if q := m.queuedSince.Load(); q != 0 && q <= t && m.queuedSince.CompareAndSwap(q, 0) {
		m.waitSum.Add(t - q)
		m.waits.Add(1)
	}
}

// sample returns the write wait since the previous sample at now (mono):
// the mean wait of the writes in between, or the age of the oldest waiting
// RPC or of a blocked write if longer. idle reports that no RPC is in
// flight: then nothing can be waiting to be written, and a stamp left by
// an RPC that failed before any write is dropped (here, off the RPC path,
// rather than in every release).
func (m *writeMeter) sample(now int64, idle bool) time.Duration {
	if idle || !m.dialed.Load() {
		// Out of the path (dialed), no write clears a stamp: there is
		// nothing to time.
		m.queuedSince.Store(0)
	}
	sum, n := m.waitSum.Load(), m.waits.Load()
	var w int64
	if dn := n - m.lastWaits; dn > 0 {
		w = (sum - m.lastSum) / dn
	}
	m.lastSum, m.lastWaits = sum, n
	if q := m.queuedSince.Load(); q != 0 && now-q > w {
		w = now - q
	}
	if s := m.writing.Load(); s != 0 && now-s > w {
		w = now - s
	}
	return time.Duration(w)
}

// dialer is the grpc.WithContextDialer function of an adaptive pool's
// connection: the caller's dialer (WithDialer), or a TCP dial (or a Unix
// socket's, for the "unix:" addresses grpc-go hands a custom dialer for
// unix targets), whose net.Conn reports its writes to m.
func (m *writeMeter) dialer(ctx context.Context, addr string) (net.Conn, error) {
	c, err := dialWith(ctx, m.dial, addr)
	if err != nil {
		return nil, err
	}
	m.dialed.Store(true)
	return &meteredConn{Conn: c, m: m}, nil
}

// dialWith dials addr with dial, or without one over TCP (or a Unix
// socket, for "unix:" addresses).
func dialWith(ctx context.Context, dial func(context.Context, string) (net.Conn, error), addr string) (net.Conn, error) {
	if dial != nil {
		return dial(ctx, addr)
	}
	network := "tcp"
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", strings.TrimPrefix(path, "//")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// meteredConn times the start and end of each Write.
type meteredConn struct {
	net.Conn
	m *writeMeter
}

func (c *meteredConn) Write(b []byte) (int, error) {
	c.m.wrote(mono())
	n, err := c.Conn.Write(b)
	c.m.writing.Store(0)
	return n, err
}

// SyscallConn lets grpc-go set socket options (TCP_USER_TIMEOUT for
// keepalive) on the wrapped connection.
func (c *meteredConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errNoSyscallConn
}

var errNoSyscallConn = &net.OpError{Op: "syscallconn", Err: syscall.EINVAL}
