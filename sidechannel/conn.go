// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Conn is one call's sidechannel, on either side. Reads and writes go
// straight to the connection (TCP, or TLS over it); Close ends it, and on
// the client CloseWithError also cancels the call.
type Conn struct {
	ctx          context.Context // the call's
	c            net.Conn
	id           ID
	writeTimeout time.Duration // server side; 0 on the client
	deadline     time.Time     // the call's, zero if none
	cancel       context.CancelCauseFunc
	stop         func() bool // stops the close on context end

	once sync.Once
	err  error
}

var _ io.ReadWriteCloser = (*Conn)(nil)

func newConn(ctx context.Context, c net.Conn, id ID, writeTimeout time.Duration, cancel context.CancelCauseFunc) *Conn {
	sc := &Conn{ctx: ctx, c: c, id: id, writeTimeout: writeTimeout, cancel: cancel}
	if d, ok := ctx.Deadline(); ok {
		sc.deadline = d
		_ = c.SetDeadline(d)
	} else {
		_ = c.SetDeadline(time.Time{})
	}
	sc.stop = context.AfterFunc(ctx, func() {
		// On the client a deadline already fails reads and writes (the
		// socket's deadline is the call's); closing too would race the
		// server's own deadline with a broken pipe, and the server would
		// end Unavailable instead of DeadlineExceeded. Close releases it.
		if cancel != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return
		}
		sc.c.Close()
	})
	return sc
}

// Read reads from the sidechannel; it returns io.EOF, unwrapped, when the
// peer has closed it.
func (sc *Conn) Read(p []byte) (int, error) {
	n, err := sc.c.Read(p)
	if err != nil && err != io.EOF {
		err = sc.wrap("read", err)
	}
	return n, err
}

// Write writes to the sidechannel. On the server each Write must finish
// within the write timeout (WithWriteTimeout) and the call's deadline.
func (sc *Conn) Write(p []byte) (int, error) {
	if sc.writeTimeout > 0 {
		d := time.Now().Add(sc.writeTimeout)
		if !sc.deadline.IsZero() && sc.deadline.Before(d) {
			d = sc.deadline
		}
		_ = sc.c.SetWriteDeadline(d)
	}
	n, err := sc.c.Write(p)
	if err != nil {
		err = sc.wrap("write", err)
	}
	return n, err
}

// wrap names the call's end as the cause when it closed the connection.
func (sc *Conn) wrap(op string, err error) error {
	if sc.ctx.Err() != nil {
		return fmt.Errorf("sidechannel: %s: %w (%w)", op, context.Cause(sc.ctx), err)
	}
	return fmt.Errorf("sidechannel: %s: %w", op, err)
}

// Close closes the sidechannel: the peer reads io.EOF after the bytes
// already written. On the client it also releases the call's context, so
// close it after the call returns (Client.Do does). Close is idempotent.
func (sc *Conn) Close() error { return sc.CloseWithError(nil) }

// CloseWithError closes the sidechannel and, on the client, cancels the
// call with err as its context's cause (context.Canceled for nil): the
// server sees its call cancelled and its sidechannel closed, and the call
// returns codes.Canceled.
func (sc *Conn) CloseWithError(err error) error {
	sc.once.Do(func() {
		sc.stop()
		if sc.cancel != nil {
			if err == nil {
				err = context.Canceled
			}
			sc.cancel(err)
		}
		if cerr := sc.c.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			sc.err = fmt.Errorf("sidechannel: close: %w", cerr)
		}
	})
	return sc.err
}

// CloseWrite half-closes the sidechannel: the peer reads io.EOF, and this
// side may still read. It works on TCP and TLS connections.
func (sc *Conn) CloseWrite() error {
	cw, ok := sc.c.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("sidechannel: %T cannot half-close", sc.c)
	}
	if err := cw.CloseWrite(); err != nil {
		return fmt.Errorf("sidechannel: close write: %w", err)
	}
	return nil
}

// StatusError is the gRPC status that says how a transfer on a sidechannel
// ended, for a handler to return: nil for nil, a status error as it is,
// Canceled or DeadlineExceeded for the call's context, DeadlineExceeded for
// a peer that stopped reading or writing past a deadline, and Unavailable
// for a sidechannel the peer broke or closed.
func StatusError(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Errorf(codes.Canceled, "%v", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return status.Errorf(codes.DeadlineExceeded, "sidechannel: the peer stalled past a deadline: %v", err)
	}
	return status.Errorf(codes.Unavailable, "sidechannel: transfer broken: %v", err)
}
