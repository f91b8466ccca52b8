// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"
)

// Client opens sidechannels to one gRPC server's address.
type Client struct {
	cfg  *config
	addr string
	tls  *tls.Config // cfg.tls with ServerName filled in
}

// NewClient returns a Client for addr (host:port, the gRPC server's). It
// dials nothing until Open.
func NewClient(addr string, opts ...Option) (*Client, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: address %q: %v", ErrInvalidOption, addr, err)
	}
	c := &Client{cfg: cfg, addr: addr}
	if cfg.tls != nil {
		c.tls = cfg.tls.Clone()
		if c.tls.ServerName == "" {
			c.tls.ServerName = host
		}
	}
	return c, nil
}

// Open dials a sidechannel and sends its hello. It returns the context to
// make the call with (ctx, plus the id in the outgoing metadata, cancelled
// by sc.CloseWithError) and the sidechannel, which is closed when that
// context ends. Open the sidechannel, then start the call; read and write
// it while the call runs.
func (c *Client) Open(ctx context.Context) (callCtx context.Context, sc *Conn, err error) {
	id, err := newID()
	if err != nil {
		return nil, nil, err
	}
	conn, err := c.cfg.dial(ctx, "tcp", c.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("sidechannel: dial %s: %w", c.addr, err)
	}
	conn, err = c.hello(ctx, conn, id)
	if err != nil {
		return nil, nil, err
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	callCtx = metadata.AppendToOutgoingContext(callCtx, MetadataKey, id.String())
	return callCtx, newConn(callCtx, conn, id, 0, cancel), nil
}

// hello writes the magic, runs TLS if configured and writes the id, within
// the hello timeout and ctx; it returns the connection to use (TLS or not)
// or closes it.
func (c *Client) hello(ctx context.Context, conn net.Conn, id ID) (net.Conn, error) {
	d := time.Now().Add(c.cfg.helloTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	_ = conn.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	w, err := c.writeHello(ctx, conn, id)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			err = errors.Join(err, context.Cause(ctx))
		}
		return nil, err
	}
	return w, nil
}

func (c *Client) writeHello(ctx context.Context, conn net.Conn, id ID) (net.Conn, error) {
	if _, err := conn.Write([]byte(Magic)); err != nil {
		return nil, fmt.Errorf("sidechannel: hello: %w", err)
	}
	w := conn
	if c.tls != nil {
		tc := tls.Client(conn, c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("sidechannel: TLS handshake: %w", err)
		}
		w = tc
	}
	if _, err := w.Write(id[:]); err != nil {
		return nil, fmt.Errorf("sidechannel: hello: %w", err)
	}
	return w, nil
}

// Do runs one call with a sidechannel: it opens the sidechannel, runs call
// with the context that carries its id and, at the same time, use with
// the sidechannel. When use fails, the call is cancelled with its error;
// when the call fails, the sidechannel is closed so that use returns.
// When use failed, Do returns an error with codes.Canceled that wraps
// use's error (errors.Is finds it), whatever the call's own status; else
// the call's error if it failed (its status says how the transfer ended).
func (c *Client) Do(ctx context.Context, call func(ctx context.Context) error, use func(sc *Conn) error) error {
	callCtx, sc, err := c.Open(ctx)
	if err != nil {
		return err
	}
	// first says which side failed first: its failure is the cause, the
	// other side's error only its consequence.
	const callFailed, useFailed = 1, 2
	var first atomic.Int32
	done := make(chan error, 1)
	go func() {
		err := call(callCtx)
		if err != nil {
			first.CompareAndSwap(0, callFailed)
			sc.Close()
		}
		done <- err
	}()
	uerr := use(sc)
	if uerr != nil && first.CompareAndSwap(0, useFailed) {
		sc.CloseWithError(uerr)
	}
	cerr := <-done
	sc.Close()
	if first.Load() == useFailed {
		return &useError{uerr}
	}
	if cerr != nil {
		return cerr
	}
	return uerr
}
