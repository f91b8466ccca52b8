// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
)

// Server splits one listener between a gRPC server (Listener) and the
// sidechannels of its calls (Accept).
type Server struct {
	cfg   *config
	inner net.Listener
	reg   *registry
	grpc  *grpcListener
	slots chan struct{} // handshakes in progress

	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	mu        sync.Mutex
	open      map[net.Conn]struct{} // in handshake, closed by Close
}

// NewServer starts splitting lis: serve gRPC on s.Listener(), and call
// s.Accept in handlers. Close (or closing s.Listener(), as grpc.Server.Stop
// does) closes lis.
func NewServer(lis net.Listener, opts ...Option) (*Server, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, inner: lis, reg: newRegistry(cfg),
		slots: make(chan struct{}, cfg.maxHandshakes),
		done:  make(chan struct{}), open: map[net.Conn]struct{}{},
	}
	s.grpc = &grpcListener{s: s, conns: make(chan net.Conn)}
	s.wg.Add(2)
	go s.acceptLoop()
	go s.janitor()
	return s, nil
}

// Listener is the listener to give grpc.Server.Serve: it yields every
// connection that does not start with the magic, replayed from its first
// byte.
func (s *Server) Listener() net.Listener { return s.grpc }

// Accept returns the sidechannel of the call whose context ctx is (a
// handler's), waiting for its hello until ctx ends or the id expires. The
// sidechannel is closed when ctx ends. Errors are gRPC status errors:
// ErrNoID, ErrExpired, ErrReused, ErrTooManyPending, ErrClosed, or
// Canceled and DeadlineExceeded when ctx ends first.
func (s *Server) Accept(ctx context.Context) (*Conn, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get(MetadataKey)
	if len(v) != 1 {
		return nil, ErrNoID
	}
	id, ok := parseID(v[0])
	if !ok {
		return nil, ErrNoID
	}
	c, err := s.reg.claim(ctx, id)
	if err != nil {
		return nil, err
	}
	return newConn(ctx, c, id, s.cfg.writeTimeout, nil), nil
}

// Pending is how many ids wait for their other half now: calls waiting
// for their hello and hellos waiting for their call.
func (s *Server) Pending() int {
	calls, hellos := s.reg.pending()
	return calls + hellos
}

// PendingHellos is how many hellos wait for their call now.
func (s *Server) PendingHellos() int {
	_, hellos := s.reg.pending()
	return hellos
}

// Close stops accepting, closes the listener, every connection in
// handshake and every waiting sidechannel, fails waiting Accepts with
// ErrClosed, and waits for its goroutines. Sidechannels already accepted
// stay open until their calls end. It is idempotent.
func (s *Server) Close() error {
	err := s.shutdown()
	s.wg.Wait()
	return err
}

// shutdown is Close without the wait, for the gRPC listener's Close (which
// grpc.Server.Stop calls) and for a listener that failed.
func (s *Server) shutdown() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		if cerr := s.inner.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("sidechannel: close: %w", cerr)
		}
		s.mu.Lock()
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.reg.sweep(true)
	})
	return err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		c, err := s.inner.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || !s.backOff(&delay) {
				s.grpc.fail(err)
				return
			}
			continue
		}
		delay = 0
		select {
		case s.slots <- struct{}{}:
		default: // full: refuse, do not queue
			c.Close()
			continue
		}
		if !s.track(c, true) {
			c.Close()
			<-s.slots
			continue
		}
		s.wg.Add(1)
		go s.handshake(c)
	}
}

// backOff waits after a failed Accept (out of file descriptors, say), as
// net/http does: 5 ms, doubling to 1 s. False if the Server closed.
func (s *Server) backOff(delay *time.Duration) bool {
	*delay = min(max(2**delay, 5*time.Millisecond), time.Second)
	t := time.NewTimer(*delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// track adds or removes c from the connections Close must close; false
// once closed.
func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.open, c)
		return true
	}
	select {
	case <-s.done:
		return false
	default:
	}
	s.open[c] = struct{}{}
	return true
}

// handshake reads c's first bytes and hands it to gRPC or to its call.
func (s *Server) handshake(c net.Conn) {
	defer s.wg.Done()
	defer func() { <-s.slots }()
	defer s.track(c, false)
	_ = c.SetDeadline(time.Now().Add(s.cfg.helloTimeout))
	prefix, side, err := sniff(c)
	if err != nil {
		c.Close()
		return
	}
	if !side {
		_ = c.SetDeadline(time.Time{})
		s.grpc.deliver(&prefixConn{Conn: c, prefix: prefix})
		return
	}
	conn := c
	if s.cfg.tls != nil {
		tc := tls.Server(c, s.cfg.tls)
		if err := tc.Handshake(); err != nil { // bounded by the deadline
			c.Close()
			return
		}
		conn = tc
	}
	id, err := readID(conn)
	if err != nil {
		conn.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	if err := s.reg.offer(id, conn); err != nil {
		conn.Close()
	}
}

// janitor expires slots; the registry decides by its clock, so a test that
// moves the clock sees the expiry at the next tick or sweep.
func (s *Server) janitor() {
	defer s.wg.Done()
	t := time.NewTicker(min(s.reg.helloLife/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.reg.sweep(false)
		case <-s.done:
			return
		}
	}
}

// grpcListener yields the connections that are not sidechannels.
type grpcListener struct {
	s     *Server
	conns chan net.Conn
	once  sync.Once
	err   error // why the inner listener stopped
}

var _ net.Listener = (*grpcListener)(nil)

func (l *grpcListener) deliver(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.s.done:
		c.Close()
	}
}

func (l *grpcListener) fail(err error) {
	l.once.Do(func() { l.err = err })
	_ = l.s.shutdown() // the inner listener died or was closed: close the rest
}

func (l *grpcListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.s.done:
		return nil, fmt.Errorf("sidechannel: %w", net.ErrClosed)
	}
}

// Close closes the whole Server (grpc.Server.Stop closes its listener).
func (l *grpcListener) Close() error { return l.s.shutdown() }

func (l *grpcListener) Addr() net.Addr { return l.s.inner.Addr() }

// prefixConn replays the bytes sniff read before the connection's own.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
