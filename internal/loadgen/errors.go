// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import "errors"

// Settings a *usage.Error from this package can name (its Setting). Each
// is a sentinel that errors.Is matches through the error, so a caller
// tells which setting was at fault without reading the text; the CLI maps
// each to its flag.
var (
	ErrTarget         = errors.New("loadgen: target")
	ErrConn           = errors.New("loadgen: connection layout")
	ErrRPC            = errors.New("loadgen: RPC kind")
	ErrInflight       = errors.New("loadgen: in-flight count")
	ErrMinInflight    = errors.New("loadgen: lowest in-flight count")
	ErrMaxInflight    = errors.New("loadgen: highest in-flight count")
	ErrInflightStep   = errors.New("loadgen: in-flight step")
	ErrPayload        = errors.New("loadgen: payload size")
	ErrWarmup         = errors.New("loadgen: warm-up")
	ErrAutoWarmup     = errors.New("loadgen: adaptive pool's warm-up")
	ErrInterval       = errors.New("loadgen: interval")
	ErrDialTimeout    = errors.New("loadgen: dial timeout")
	ErrRPCTimeout     = errors.New("loadgen: RPC timeout")
	ErrRate           = errors.New("loadgen: rate")
	ErrArrival        = errors.New("loadgen: arrival process")
	ErrPacing         = errors.New("loadgen: pacing")
	ErrMaxOutstanding = errors.New("loadgen: max outstanding")
	ErrDrain          = errors.New("loadgen: drain")
	ErrMaxRPS         = errors.New("loadgen: rate cap")
	ErrService        = errors.New("loadgen: service")
)

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
