// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

const unaryMethod = "/grpc.testing.BenchmarkService/UnaryCall"

var plaintext = WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials()))

// testServer is rpclab's ping server on a loopback port.
type testServer struct {
	addr string
	mu   sync.Mutex
	srv  *grpc.Server
	done chan struct{}
}

// startServer serves on 127.0.0.1:0 until the test ends.
func startServer(t testing.TB) *testServer {
	t.Helper()
	lis := pooltest.Listen(t)
	s := &testServer{addr: lis.Addr().String()}
	s.serve(lis)
	t.Cleanup(s.stop)
	return s
}

func (s *testServer) serve(lis net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv = pooltest.NewServer(nil)
	s.done = make(chan struct{})
	srv, done := s.srv, s.done
	go func() {
		_ = srv.Serve(lis)
		close(done)
	}()
}

// stop kills the server: every connection is closed, RPCs running on it
// fail, and the port is free.
func (s *testServer) stop() {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Stop()
		<-done
	}
}

// restart serves again on the same address, retrying while the port is
// not yet free, until ctx ends.
func (s *testServer) restart(ctx context.Context, t testing.TB) {
	t.Helper()
	for {
		lis, err := net.Listen("tcp", s.addr)
		if err == nil {
			s.serve(lis)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("listen again on %s: %v", s.addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// newPool creates a pool and closes it when the test ends, checking that
// no watcher goroutine outlives Close.
func newPool(t testing.TB, target string, opts ...Option) *Pool {
	t.Helper()
	p, err := New(target, append([]Option{plaintext}, opts...)...)
	if err != nil {
		t.Fatalf("New(%q): %v", target, err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: %v", err)
		}
		checkNoWatchers(t)
	})
	return p
}

// checkNoWatchers fails t if a watcher goroutine is still running. A
// watcher that has called wg.Done may show in the stacks a moment longer,
// so it looks again for up to a second, as goleak does.
func checkNoWatchers(t testing.TB) {
	t.Helper()
	n := watchers()
	for i := 0; i < 100 && n != 0; i++ {
		time.Sleep(10 * time.Millisecond)
		n = watchers()
	}
	if n != 0 {
		t.Errorf("after Close, %d watcher goroutines still run, want 0", n)
	}
}

// watchers counts the pool's background goroutines still running: the
// connections' watchers, the adaptive control loop and the retirer of
// grown connections.
func watchers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "pool.(*Pool).watch(") + strings.Count(string(buf), "pool.(*Pool).control(") +
		strings.Count(string(buf), "pool.(*Pool).retireIdle(")
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, cc grpc.ClientConnInterface, opts ...grpc.CallOption) error {
	return cc.Invoke(ctx, unaryMethod, &pb.SimpleRequest{ResponseSize: 1}, &pb.SimpleResponse{}, opts...)
}

// adaptivePool is an adaptive pool under r, driven by a fake clock (no
// decision until the test steps it), connected to a server of its own.
func adaptivePool(t *testing.T, r adapt.Rule) (*Pool, *fakeClock, context.Context) {
	t.Helper()
	srv := startServer(t)
	ctx := pooltest.Context(t)
	fc := newFakeClock()
	p := newPool(t, srv.addr, withRule(r), fc.option())
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return p, fc, ctx
}

// stallProxy forwards TCP connections to a backend; Freeze stops one
// connection from forwarding anything in either direction, as a server
// that hangs while its socket stays open.
type stallProxy struct {
	lis     net.Listener
	backend string
	mu      sync.Mutex
	links   map[string]*link // by the client's address
	wg      sync.WaitGroup
}

type link struct {
	client, server net.Conn
	frozen         chan struct{} // closed when the link freezes
	once           sync.Once
}

func startProxy(t testing.TB, backend string) *stallProxy {
	t.Helper()
	lis := pooltest.Listen(t)
	p := &stallProxy{lis: lis, backend: backend, links: map[string]*link{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *stallProxy) addr() string { return p.lis.Addr().String() }

// accepted counts the connections the proxy has accepted and forwarded.
func (p *stallProxy) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

func (p *stallProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.backend)
		if err != nil {
			_ = c.Close()
			continue
		}
		l := &link{client: c, server: s, frozen: make(chan struct{})}
		p.mu.Lock()
		p.links[c.RemoteAddr().String()] = l
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(l, s, c)
		go p.pipe(l, c, s)
	}
}

// pipe copies from src to dst until either fails or the link freezes.
func (p *stallProxy) pipe(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-l.frozen:
			return // drop it and read no more: the peer hangs
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = dst.Close()
			}
			return
		}
	}
}

// freeze stalls the link whose client side has address client.
func (p *stallProxy) freeze(t testing.TB, client string) {
	t.Helper()
	p.mu.Lock()
	l := p.links[client]
	p.mu.Unlock()
	if l == nil {
		t.Fatalf("proxy has no connection from %s", client)
	}
	l.once.Do(func() { close(l.frozen) })
}

func (p *stallProxy) close() {
	_ = p.lis.Close()
	p.mu.Lock()
	for _, l := range p.links {
		_ = l.client.Close()
		_ = l.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
