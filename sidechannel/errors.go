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

// useError is what Client.Do returns when its use function failed: the
// call was cancelled because of it, whatever status the call itself ended
// with (Canceled if the client noticed its own cancel first, Unavailable if
// the server's reply to the closed sidechannel arrived first). It carries
// codes.Canceled for status.Code and unwraps to use's error for errors.Is.
type useError struct{ err error }

func (e *useError) Error() string { return "sidechannel: call cancelled: " + e.err.Error() }
func (e *useError) Unwrap() error { return e.err }

// GRPCStatus reports the call as cancelled, so status.Code and
// status.FromError read codes.Canceled.
func (e *useError) GRPCStatus() *status.Status { return status.New(codes.Canceled, e.Error()) }
