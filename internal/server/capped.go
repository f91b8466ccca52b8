// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/tls"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rpclab/rpclab/internal/bulk"
)

// maxRefusing bounds the connections past the cap a listener answers with
// a refusal at once (each for at most refusalWait); past it, one is closed
// unanswered.
const maxRefusing = 64

// refusalWait bounds how long a refused connection is kept to answer and to
// read what its peer sent: closing it unread would reset it, and a reset
// may discard the refusal before the peer reads it.
const refusalWait = time.Second

// cappedListener is the one connection cap of the bulk listeners (raw TCP
// and HTTP): at most max connections open. Past the cap, up to maxRefusing
// more are accepted as refused connections (overCap says so; the server
// answers each with why, within refusalWait, and closes it); past those, a
// connection is closed unanswered. closeAll closes every open connection
// and every one accepted after it.
type cappedListener struct {
	net.Listener
	max int

	mu     sync.Mutex
	open   map[*cappedConn]struct{}
	over   int
	closed bool
}

func newCappedListener(l net.Listener, max int) *cappedListener {
	return &cappedListener{Listener: l, max: max, open: map[*cappedConn]struct{}{}}
}

// Accept returns the next connection under the cap, or past it one to be
// refused; an error is the listener's.
func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		switch {
		case l.closed:
		case len(l.open) < l.max:
			cc := &cappedConn{Conn: c, l: l}
			l.open[cc] = struct{}{}
			l.mu.Unlock()
			return cc, nil
		case l.over < maxRefusing:
			l.over++
			l.mu.Unlock()
			_ = c.SetDeadline(time.Now().Add(refusalWait))
			return &cappedConn{Conn: c, l: l, over: true}, nil
		}
		l.mu.Unlock()
		c.Close()
	}
}

// closeAll closes the open connections under the cap; from now on Accept
// closes what it accepts. Refused ones close within refusalWait.
func (l *cappedListener) closeAll() {
	l.mu.Lock()
	l.closed = true
	open := make([]*cappedConn, 0, len(l.open))
	for c := range l.open {
		open = append(open, c)
	}
	l.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// cappedConn is a connection of a cappedListener; over marks one past the
// cap. Closing it frees its place.
type cappedConn struct {
	net.Conn
	l    *cappedListener
	over bool
	once sync.Once
}

func (c *cappedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.over {
			c.l.over--
		} else {
			delete(c.l.open, c)
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite half-closes the connection where the one beneath can.
func (c *cappedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// overCap says whether c, a cappedListener's connection (or a TLS one
// over it), is past the cap.
func overCap(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	cc, ok := c.(*cappedConn)
	return ok && cc.over
}

// writeRefusal writes a bulk.RefusalMagic message on c, half-closes it,
// reads what the peer sent (at most refusalWait) and closes it.
func writeRefusal(c net.Conn, msg string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refusalWait))
	if _, err := c.Write(bulk.EncodeRefusal(msg)); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}
