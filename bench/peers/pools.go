// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	commonspool "github.com/jolestar/go-commons-pool/v2"
	"google.golang.org/api/option"
	gtransport "google.golang.org/api/transport/grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// UnaryMethod is the full name of the call every peer makes.
const UnaryMethod = "/grpc.testing.BenchmarkService/UnaryCall"

// ErrConns is returned for a connection count below 1.
var ErrConns = errors.New("peers: connection count must be at least 1")

// ErrNoPick is Pick's error for a peer whose pick cannot be called on its
// own: a bare ClientConn has none, and rpclab's pool picks inside Invoke
// (its pick alone is measured by `go test -bench Pick` in rpclab's pool
// module).
var ErrNoPick = errors.New("peers: this peer has no pick of its own")

// A Client is one peer dialled to a target. Each goroutine of a benchmark
// takes its own Worker, so a peer that keeps state per goroutine (one
// ClientConn each) can.
type Client interface {
	// NewWorker returns what one goroutine calls through.
	NewWorker() (Worker, error)
	// Close closes every connection the client and its workers opened.
	Close() error
}

// A Worker makes calls for one goroutine.
type Worker interface {
	// Call makes one unary ping through the peer: pick (or borrow) a
	// connection, invoke, release it.
	Call(ctx context.Context, req *pb.SimpleRequest, resp *pb.SimpleResponse) error
	// Pick picks (or borrows) a connection and releases it without an RPC:
	// the pool's own cost per call.
	Pick(ctx context.Context) error
}

// A Peer is one way to hold connections.
type Peer struct {
	// Name is the peer's row label.
	Name string
	// Open dials conns connections to target (a peer with a fixed count,
	// such as the bare ClientConn, ignores conns).
	Open func(ctx context.Context, target string, conns int) (Client, error)
	// FixedConns is true when the peer's connection count does not follow
	// the conns argument (bare: 1; per-goroutine: one per goroutine).
	FixedConns bool
}

// All returns every peer, rpclab's pool first (the ratios' base).
func All() []Peer {
	return []Peer{
		{Name: "rpclab-pool", Open: openRPCLab},
		{Name: "google-api-pool", Open: openGoogle},
		{Name: "commons-pool", Open: openCommons},
		{Name: "bare-conn", Open: openBare, FixedConns: true},
		{Name: "per-goroutine", Open: openPerGoroutine, FixedConns: true},
	}
}

func dialOpts() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
}

// --- rpclab's pool ---

type rpclabClient struct{ p *pool.Pool }

func openRPCLab(ctx context.Context, target string, conns int) (Client, error) {
	if conns < 1 {
		return nil, ErrConns
	}
	p, err := pool.New(target, pool.WithSize(conns), pool.WithDialOptions(dialOpts()...))
	if err != nil {
		return nil, fmt.Errorf("peers: rpclab pool: %w", err)
	}
	if err := p.Connect(ctx); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("peers: rpclab pool: %w", err)
	}
	return &rpclabClient{p: p}, nil
}

func (c *rpclabClient) NewWorker() (Worker, error) { return ccWorker{c.p}, nil }
func (c *rpclabClient) Close() error               { return c.p.Close() }

// ccWorker calls through any grpc.ClientConnInterface.
type ccWorker struct{ cc grpc.ClientConnInterface }

func (w ccWorker) Call(ctx context.Context, req *pb.SimpleRequest, resp *pb.SimpleResponse) error {
	return w.cc.Invoke(ctx, UnaryMethod, req, resp)
}

// Pick returns ErrNoPick: see its doc.
func (w ccWorker) Pick(context.Context) error { return ErrNoPick }

// --- Google's client libraries' pool ---

type googleClient struct{ p gtransport.ConnPool }

// openGoogle dials DialPool the way a Google client library does, against a
// plaintext target: no credentials, the endpoint given, and OpenTelemetry's
// stats handler (on by default) turned off so the row shows the pool, not
// the tracing.
func openGoogle(ctx context.Context, target string, conns int) (Client, error) {
	if conns < 1 {
		return nil, ErrConns
	}
	p, err := gtransport.DialPool(ctx,
		option.WithEndpoint(target),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithGRPCConnectionPool(conns),
	)
	if err != nil {
		return nil, fmt.Errorf("peers: google-api pool: %w", err)
	}
	return &googleClient{p: p}, nil
}

func (c *googleClient) NewWorker() (Worker, error) { return googleWorker{c.p}, nil }
func (c *googleClient) Close() error               { return c.p.Close() }

type googleWorker struct{ p gtransport.ConnPool }

func (w googleWorker) Call(ctx context.Context, req *pb.SimpleRequest, resp *pb.SimpleResponse) error {
	return w.p.Invoke(ctx, UnaryMethod, req, resp)
}

func (w googleWorker) Pick(context.Context) error {
	if w.p.Conn() == nil {
		return errors.New("peers: google-api pool: nil connection")
	}
	return nil
}

// --- a general object pool of ClientConns ---

type commonsClient struct{ p *commonspool.ObjectPool }

// openCommons holds conns ClientConns in go-commons-pool; each call borrows
// one, invokes on it and returns it, so at most conns calls are in flight.
func openCommons(ctx context.Context, target string, conns int) (Client, error) {
	if conns < 1 {
		return nil, ErrConns
	}
	factory := commonspool.NewPooledObjectFactory(
		func(context.Context) (any, error) {
			return grpc.NewClient(target, dialOpts()...)
		},
		func(_ context.Context, o *commonspool.PooledObject) error {
			return o.Object.(*grpc.ClientConn).Close()
		},
		nil, nil, nil)
	cfg := commonspool.NewDefaultPoolConfig()
	cfg.MaxTotal = conns
	cfg.MaxIdle = conns
	p := commonspool.NewObjectPool(ctx, factory, cfg)
	// Dial every connection now, as the other peers do.
	objs := make([]any, 0, conns)
	var err error
	for range conns {
		var o any
		if o, err = p.BorrowObject(ctx); err != nil {
			break
		}
		cc := o.(*grpc.ClientConn)
		cc.Connect()
		objs = append(objs, o)
	}
	for _, o := range objs {
		if rerr := p.ReturnObject(ctx, o); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		p.Close(ctx)
		return nil, fmt.Errorf("peers: commons pool: %w", err)
	}
	return &commonsClient{p: p}, nil
}

func (c *commonsClient) NewWorker() (Worker, error) { return commonsWorker{c.p}, nil }

func (c *commonsClient) Close() error {
	c.p.Close(context.Background())
	return nil
}

type commonsWorker struct{ p *commonspool.ObjectPool }

func (w commonsWorker) Call(ctx context.Context, req *pb.SimpleRequest, resp *pb.SimpleResponse) error {
	o, err := w.p.BorrowObject(ctx)
	if err != nil {
		return fmt.Errorf("peers: commons pool: borrow: %w", err)
	}
	err = o.(*grpc.ClientConn).Invoke(ctx, UnaryMethod, req, resp)
	if rerr := w.p.ReturnObject(ctx, o); rerr != nil && err == nil {
		err = fmt.Errorf("peers: commons pool: return: %w", rerr)
	}
	return err
}

func (w commonsWorker) Pick(ctx context.Context) error {
	o, err := w.p.BorrowObject(ctx)
	if err != nil {
		return fmt.Errorf("peers: commons pool: borrow: %w", err)
	}
	return w.p.ReturnObject(ctx, o)
}

// --- one bare ClientConn ---

type bareClient struct{ cc *grpc.ClientConn }

func openBare(_ context.Context, target string, _ int) (Client, error) {
	cc, err := grpc.NewClient(target, dialOpts()...)
	if err != nil {
		return nil, fmt.Errorf("peers: bare conn: %w", err)
	}
	cc.Connect()
	return &bareClient{cc: cc}, nil
}

func (c *bareClient) NewWorker() (Worker, error) { return ccWorker{c.cc}, nil }
func (c *bareClient) Close() error               { return c.cc.Close() }

// --- one ClientConn per goroutine ---

type perGoroutineClient struct {
	target string
	mu     sync.Mutex
	ccs    []*grpc.ClientConn
}

func openPerGoroutine(_ context.Context, target string, _ int) (Client, error) {
	return &perGoroutineClient{target: target}, nil
}

func (c *perGoroutineClient) NewWorker() (Worker, error) {
	cc, err := grpc.NewClient(c.target, dialOpts()...)
	if err != nil {
		return nil, fmt.Errorf("peers: per-goroutine conn: %w", err)
	}
	cc.Connect()
	c.mu.Lock()
	c.ccs = append(c.ccs, cc)
	c.mu.Unlock()
	return ccWorker{cc}, nil
}

func (c *perGoroutineClient) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, cc := range c.ccs {
		errs = append(errs, cc.Close())
	}
	c.ccs = nil
	return errors.Join(errs...)
}
