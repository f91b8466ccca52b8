// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"errors"
	"fmt"
)

// Settings a *UsageError can name. Each is a sentinel that errors.Is
// matches through the UsageError, so a caller tells which setting was at
// fault without reading the text; the CLI maps each to its flag.
var (
	ErrTarget         = errors.New("target")
	ErrConn           = errors.New("connection layout")
	ErrRPC            = errors.New("RPC kind")
	ErrInflight       = errors.New("in-flight count")
	ErrMinInflight    = errors.New("lowest in-flight count")
	ErrMaxInflight    = errors.New("highest in-flight count")
	ErrInflightStep   = errors.New("in-flight step")
	ErrPayload        = errors.New("payload size")
	ErrWarmup         = errors.New("warm-up")
	ErrInterval       = errors.New("interval")
	ErrDialTimeout    = errors.New("dial timeout")
	ErrRPCTimeout     = errors.New("RPC timeout")
	ErrRate           = errors.New("rate")
	ErrArrival        = errors.New("arrival process")
	ErrPacing         = errors.New("pacing")
	ErrMaxOutstanding = errors.New("max outstanding")
	ErrDrain          = errors.New("drain")
	ErrMaxRPS         = errors.New("rate cap")
	ErrService        = errors.New("service")
)

// UsageError is a problem with what was asked for (a bad setting), as
// opposed to a failure while measuring. Setting is one of the sentinels
// above; the CLI exits with code 2 and names its flag.
type UsageError struct {
	Setting error
	Err     error
}

func (e *UsageError) Error() string { return fmt.Sprintf("loadgen: %v: %v", e.Setting, e.Err) }

// Unwrap gives both the setting's sentinel and the cause.
func (e *UsageError) Unwrap() []error { return []error{e.Setting, e.Err} }

func usageErr(setting error, format string, args ...any) error {
	return &UsageError{Setting: setting, Err: fmt.Errorf(format, args...)}
}

// ErrUnreachable marks a step that could not connect to the target; the
// error wrapping it names the cause when it is known (connection refused,
// no such host, a server that does not speak gRPC or TLS).
var ErrUnreachable = errors.New("target unreachable")

// ErrBadTarget marks a target that cannot be dialled as written (no port,
// a port out of range); it is found before any connection is made.
var ErrBadTarget = errors.New("bad target address")

// ErrFileLimit marks a layout that needs more connections than the
// process may open files; it is found before any connection is made.
var ErrFileLimit = errors.New("not enough file descriptors")
