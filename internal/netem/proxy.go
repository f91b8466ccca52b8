// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpclab/rpclab/internal/accept"
)

// Option configures a Proxy.
type Option func(*config) error

type config struct {
	queueBytes  int
	dialTimeout time.Duration
	logger      *slog.Logger
}

func defaultConfig() config {
	return config{
		queueBytes:  DefaultQueueBytes,
		dialTimeout: 5 * time.Second,
		logger:      slog.New(slog.DiscardHandler),
	}
}

// WithQueueBytes sets how many bytes each direction of each connection
// holds in flight (default DefaultQueueBytes, 16 MiB; must be positive).
func WithQueueBytes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("netem: queue of %d bytes: must be positive", n)
		}
		c.queueBytes = n
		return nil
	}
}

// WithDialTimeout bounds each connection to the upstream (default 5 s;
// must be positive).
func WithDialTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("netem: dial timeout %v: must be positive", d)
		}
		c.dialTimeout = d
		return nil
	}
}

// WithLogger sets where the proxy logs connections that fail (default:
// nowhere). Nothing is logged per byte or per chunk.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("netem: nil logger")
		}
		c.logger = l
		return nil
	}
}

// Stats counts what a Proxy has done.
type Stats struct {
	// Accepted counts client connections accepted.
	Accepted int64 `json:"accepted"`
	// Failed counts client connections closed because the upstream could
	// not be reached.
	Failed int64 `json:"failed"`
	// BytesUp and BytesDown count bytes delivered to the upstream and back
	// to clients.
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
}

// Proxy is a TCP proxy that sends every connection through an emulated
// Network: each accepted client connection gets its own connection to the
// upstream, Up applies to client-to-upstream bytes, Down to the replies. A
// half-close (FIN) is passed on once the bytes before it are delivered; an
// error on either side closes both.
type Proxy struct {
	lis      net.Listener
	upstream string
	net      Network
	cfg      config

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}

	accepted, failed, bytesUp, bytesDown atomic.Int64
}

// NewProxy returns a proxy that accepts on lis and forwards to upstream
// (host:port) through n. Call Serve to run it.
func NewProxy(lis net.Listener, upstream string, n Network, opts ...Option) (*Proxy, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return nil, fmt.Errorf("netem: upstream %q: %w", upstream, err)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := checkLoop(lis.Addr(), upstream, cfg.dialTimeout); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{lis: lis, upstream: upstream, net: n, cfg: cfg, ctx: ctx, cancel: cancel,
		conns: map[net.Conn]struct{}{}}, nil
}

// checkLoop refuses an upstream that resolves (within timeout) to the
// listener's address: the same port on the same IP, or on any local IP
// when the listener listens on every interface. A name that does not
// resolve is left to the dial, which names it.
func checkLoop(lis net.Addr, upstream string, timeout time.Duration) error {
	la, ok := lis.(*net.TCPAddr)
	if !ok {
		return nil
	}
	host, port, err := net.SplitHostPort(upstream)
	if err != nil || port != strconv.Itoa(la.Port) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if ip.IP.Equal(la.IP) || la.IP.IsUnspecified() && isLocal(ip.IP) {
			return fmt.Errorf("%w: %s resolves to %s, where the proxy listens (%s)", ErrLoop, upstream, ip.IP, la)
		}
	}
	return nil
}

// isLocal reports whether ip is this host's: loopback, unspecified, or an
// interface's address.
func isLocal(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Listen listens on addr (host:port; port 0 picks a free one) and returns
// the proxy, ready to Serve.
func Listen(addr, upstream string, n Network, opts ...Option) (*Proxy, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("netem: %w", err)
	}
	p, err := NewProxy(lis, upstream, n, opts...)
	if err != nil {
		lis.Close()
		return nil, err
	}
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() net.Addr { return p.lis.Addr() }

// Network is the emulated network between the proxy's sides.
func (p *Proxy) Network() Network { return p.net }

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{Accepted: p.accepted.Load(), Failed: p.failed.Load(),
		BytesUp: p.bytesUp.Load(), BytesDown: p.bytesDown.Load()}
}

// Serve accepts connections until ctx ends or Close is called, then closes
// every connection and returns nil. An upstream that cannot be reached
// closes that client's connection only; a failed Accept (too many open
// files) is retried after a backoff (package accept); the proxy keeps
// serving.
func (p *Proxy) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { p.Close() })
	defer stop()
	retry := func(err error) {
		p.cfg.logger.Warn("netem: accept failed; retrying", "err", err)
	}
	for {
		c, err := accept.Next(p.lis, p.ctx.Done(), retry)
		if err != nil { // the listener is closed
			p.Close()
			return nil
		}
		p.accepted.Add(1)
		if !p.track(c, true) {
			c.Close()
			return nil
		}
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// Close stops accepting, closes every connection and waits for them.
func (p *Proxy) Close() error {
	p.cancel()
	err := p.lis.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// track records c so Close closes it, unless the proxy is closing. With
// started it also counts a handler goroutine in p.wg, under the same lock
// Close takes after cancelling: an Add can then never race Close's Wait.
func (p *Proxy) track(c net.Conn, started bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return false
	}
	p.conns[c] = struct{}{}
	if started {
		p.wg.Add(1)
	}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// handle proxies one client connection.
func (p *Proxy) handle(client net.Conn) {
	defer client.Close()
	dctx, cancel := context.WithTimeout(p.ctx, p.cfg.dialTimeout)
	var d net.Dialer
	server, err := d.DialContext(dctx, "tcp", p.upstream)
	cancel()
	if err != nil {
		p.failed.Add(1)
		p.cfg.logger.Warn("netem: upstream unreachable; closing the client connection",
			"client", client.RemoteAddr().String(), "upstream", p.upstream, "err", err)
		return
	}
	if !p.track(server, false) {
		server.Close()
		return
	}
	defer p.untrack(server)
	defer server.Close()
	setNoDelay(client)
	setNoDelay(server)

	s := seeds.Add(2)
	up := newPipe(p.net.Up.Effects(s), p.cfg.queueBytes)
	down := newPipe(p.net.Down.Effects(s+1), p.cfg.queueBytes)
	var once sync.Once
	abort := func() {
		once.Do(func() {
			up.closeRead()
			down.closeRead()
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(4)
	relay := func(src, dst net.Conn, q *pipe, n *atomic.Int64) {
		go func() {
			defer wg.Done()
			_, err := q.ReadFrom(src)
			q.closeWrite(err)
		}()
		go func() {
			defer wg.Done()
			q.count = n
			_, err := q.WriteTo(dst)
			if err != nil {
				abort()
				return
			}
			closeWrite(dst)
		}()
	}
	relay(client, server, up, &p.bytesUp)
	relay(server, client, down, &p.bytesDown)
	wg.Wait()
	abort()
}

func setNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
}
