// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package pool spreads RPCs over several gRPC connections to one target.
//
// One grpc.ClientConn multiplexes every RPC over a single HTTP/2 connection,
// and on a fast network that connection, not the server, caps throughput. A
// Pool holds several ClientConns and picks one per RPC. *Pool implements
// grpc.ClientConnInterface, so generated stubs take it directly:
//
//	p, err := pool.New("dns:///backend:443", pool.WithSize(4),
//		pool.WithDialOptions(grpc.WithTransportCredentials(creds)))
//	...
//	client := pb.NewFooClient(p)
//
// The pool only makes, picks and closes connections; it measures nothing.
package pool

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// ErrClosed is returned by every call on a Pool after Close.
var ErrClosed = errors.New("pool: closed")

// Pool is a fixed set of ClientConns to one target.
type Pool struct {
	target string
	conns  []*grpc.ClientConn
	next   atomic.Uint64
	closed atomic.Bool
}

var _ grpc.ClientConnInterface = (*Pool)(nil)

// New creates a pool of connections to target. Connections are created
// lazily by grpc-go (the first RPC, or Connect, dials them).
func New(target string, opts ...Option) (*Pool, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	if target == "" {
		return nil, errors.New("pool: empty target")
	}
	if cfg.size <= 0 {
		return nil, fmt.Errorf("pool: size %d must be at least 1", cfg.size)
	}
	p := &Pool{target: target, conns: make([]*grpc.ClientConn, cfg.size)}
	for i := range p.conns {
		cc, err := grpc.NewClient(target, cfg.dialOpts...)
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("pool: dial %s: %w", target, err)
		}
		p.conns[i] = cc
	}
	return p, nil
}

// Size is the number of connections in the pool.
func (p *Pool) Size() int { return len(p.conns) }

// Conn returns the connection the next RPC would use.
func (p *Pool) Conn() *grpc.ClientConn {
	n := p.next.Add(1) - 1
	return p.conns[n%uint64(len(p.conns))]
}

// Invoke performs a unary RPC on the next connection.
func (p *Pool) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if p.closed.Load() {
		return ErrClosed
	}
	return p.Conn().Invoke(ctx, method, args, reply, opts...)
}

// NewStream opens a stream on the next connection; it stays there.
func (p *Pool) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	return p.Conn().NewStream(ctx, desc, method, opts...)
}

// Connect dials every connection and waits until all are READY or ctx
// ends. It returns an error naming the last state seen when one is not.
func (p *Pool) Connect(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	for _, cc := range p.conns {
		cc.Connect()
	}
	for i, cc := range p.conns {
		for {
			s := cc.GetState()
			if s == connectivity.Ready {
				break
			}
			if s == connectivity.Shutdown {
				return ErrClosed
			}
			if !cc.WaitForStateChange(ctx, s) {
				return fmt.Errorf("pool: connection %d to %s not ready (last state %s): %w", i, p.target, s, ctx.Err())
			}
		}
	}
	return nil
}

// Close closes every connection and returns their errors joined.
func (p *Pool) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	var errs []error
	for _, cc := range p.conns {
		if cc != nil {
			if err := cc.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
