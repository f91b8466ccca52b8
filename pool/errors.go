// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrClosed is returned by every call on a Pool once Close or Shutdown
// has begun, including a second Close or Shutdown. It is a gRPC status
// error with code Canceled, the code grpc-go gives RPCs on a closed
// ClientConn, so status.Code reports it as such and errors.Is(err,
// ErrClosed) identifies it.
var ErrClosed = status.Error(codes.Canceled, "pool: closed")

// ErrInvalidOption is wrapped by New's error when an option's value is out
// of range (a size below 1, an unknown policy, a negative duration).
var ErrInvalidOption = errors.New("pool: invalid option")

// ErrEmptyTarget is returned by New when the target is "".
var ErrEmptyTarget = errors.New("pool: empty target")

// ErrDial is wrapped by New's error when grpc.NewClient rejects the target
// or the dial options; the wrapped chain also holds grpc-go's error.
var ErrDial = errors.New("pool: dial")
