// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The errors Server.Accept returns are gRPC status errors, so a handler can
// return them as they are and the client sees a clear code;
// errors.Is(err, ErrExpired) identifies them.
var (
	// ErrNoID: the call's metadata has no MetadataKey, or it is not 32 hex
	// digits.
	ErrNoID = status.Error(codes.InvalidArgument, "sidechannel: the call carries no valid "+MetadataKey+" metadata")
	// ErrExpired: no connection presented the call's id before the expiry
	// (WithExpiry), or the connection that did waited longer than that for
	// its call.
	ErrExpired = status.Error(codes.FailedPrecondition, "sidechannel: no sidechannel connection presented the call's id before it expired")
	// ErrReused: the id was already claimed, or presented twice.
	ErrReused = status.Error(codes.AlreadyExists, "sidechannel: the sidechannel id was already used")
	// ErrTooManyPending: WithMaxPending ids already wait for their other
	// half.
	ErrTooManyPending = status.Error(codes.ResourceExhausted, "sidechannel: too many sidechannels pending")
	// ErrClosed: the Server was closed.
	ErrClosed = status.Error(codes.Unavailable, "sidechannel: server closed")
)

// ErrInvalidOption is wrapped by NewServer's and NewClient's error when an
// option's value is out of range.
var ErrInvalidOption = errors.New("sidechannel: invalid option")

// ErrBadHello is wrapped by the error of a hello that is not the magic
// followed by an id (a client sees the connection closed).
var ErrBadHello = errors.New("sidechannel: bad hello")
