// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// drainTimeout bounds how long a closed Conn keeps delivering what was
// written before Close.
const drainTimeout = 10 * time.Second

var seeds atomic.Uint64

// Conn is one end of a connection seen through an emulated network: Write
// queues bytes on the outbound link and returns at once (unless the link's
// queue is full), Read returns bytes from the inbound link once they are
// due. Only one end of a connection should be wrapped.
type Conn struct {
	raw     net.Conn
	in, out *pipe
	outDone chan struct{}
	once    sync.Once
}

var _ net.Conn = (*Conn)(nil)

// newConn wraps raw with out as the link for what this end writes and in
// for what it reads.
func newConn(raw net.Conn, out, in Link) *Conn {
	s := seeds.Add(2)
	c := &Conn{
		raw:     raw,
		in:      newPipe(in.Effects(s), DefaultQueueBytes),
		out:     newPipe(out.Effects(s+1), DefaultQueueBytes),
		outDone: make(chan struct{}),
	}
	go func() {
		defer close(c.outDone)
		_, err := c.out.WriteTo(raw)
		c.out.closeRead()
		if err == nil {
			closeWrite(raw)
		} else {
			raw.Close()
		}
	}()
	go func() {
		_, err := c.in.ReadFrom(raw)
		c.in.closeWrite(err)
	}()
	return c
}

// closeWrite half-closes c if it can, else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// Read reads bytes that have crossed the inbound link.
func (c *Conn) Read(b []byte) (int, error) { return c.in.Read(b) }

// Write sends b over the outbound link without waiting for the delay.
func (c *Conn) Write(b []byte) (int, error) { return c.out.Write(b) }

// Close stops reading at once; bytes already written are still delivered
// (for up to 10 s, as a kernel lingers on a closed socket's send queue),
// then the connection closes.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.in.closeRead()
		c.out.closeWrite(nil)
		go func() {
			t := time.NewTimer(drainTimeout)
			defer t.Stop()
			select {
			case <-c.outDone:
			case <-t.C:
				c.out.closeRead()
				<-c.outDone
			}
			c.raw.Close()
		}()
	})
	return nil
}

// CloseWrite ends the outbound direction once its queued bytes are
// delivered, leaving reads open.
func (c *Conn) CloseWrite() error {
	c.out.closeWrite(nil)
	return nil
}

// LocalAddr is the wrapped connection's local address.
func (c *Conn) LocalAddr() net.Addr { return c.raw.LocalAddr() }

// RemoteAddr is the wrapped connection's remote address.
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.in.setDeadline(t, true)
	c.out.setDeadline(t, false)
	return nil
}

// SetReadDeadline bounds Read: a Read blocked past t returns
// os.ErrDeadlineExceeded.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.in.setDeadline(t, true)
	return nil
}

// SetWriteDeadline bounds how long Write waits for room in a full queue.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.out.setDeadline(t, false)
	return nil
}

// Conn wraps the client (dialing) end of a connection: its writes take the
// Up link, its reads the Down link.
func (n Network) Conn(c net.Conn) net.Conn { return newConn(c, n.Up, n.Down) }

// Listener wraps l so every accepted connection is the server end: its
// writes take the Down link, its reads the Up link. Wrap either the
// listener or the dialer, not both.
func (n Network) Listener(l net.Listener) net.Listener { return &listener{Listener: l, n: n} }

type listener struct {
	net.Listener
	n Network
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newConn(c, l.n.Down, l.n.Up), nil
}

// DialFunc is the shape of net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer wraps dial (nil: a plain net.Dialer) so each connection it makes is
// the client end of n. For grpc.WithContextDialer, adapt it:
//
//	d := n.Dialer(nil)
//	grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d(ctx, "tcp", a) })
func (n Network) Dialer(dial DialFunc) DialFunc {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return n.Conn(c), nil
	}
}
