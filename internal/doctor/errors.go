// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor

import "errors"

// Settings of Options.Validate's *usage.Error, one per option, so a caller
// can name its own flag for each (rpclab doctor maps them to --target,
// --budget, ...).
var (
	// ErrTarget: Target is empty.
	ErrTarget = errors.New("doctor: no target")
	// ErrBudget: Budget is not positive, or too short for every layout to
	// be measured at verdict.MinInflights in-flight counts.
	ErrBudget = errors.New("doctor: bad budget")
	// ErrMaxInflight: MaxInflight is below verdict.MinInflights or above
	// loadgen.MaxInflight.
	ErrMaxInflight = errors.New("doctor: bad in-flight cap")
	// ErrMaxRPS: MaxRPS is negative or not a number, or set for a Runner
	// that runs a closed loop only.
	ErrMaxRPS = errors.New("doctor: bad rate cap")
	// ErrPools: no pool size, a size outside 2..MaxPool, or one twice.
	ErrPools = errors.New("doctor: bad pool sizes")
	// ErrPayload: PayloadBytes is negative, above MaxPayload, or set with
	// a Call.
	ErrPayload = errors.New("doctor: bad payload")
	// ErrStep: Warmup is negative, Interval or DialTimeout not positive.
	ErrStep = errors.New("doctor: bad step timing")
	// ErrCall: Call is client-streaming (or bidi), or has no Request, or
	// is set for a Runner that calls the ping only.
	ErrCall = errors.New("doctor: unsupported call")
	// ErrDialOptions: Load has dial options (TLS, metadata) for a Runner
	// that dials in plaintext without metadata.
	ErrDialOptions = errors.New("doctor: unsupported dial options")
	// ErrAdaptive: Adaptive is set for a Runner whose client has no
	// adaptive pool (every client but Go's).
	ErrAdaptive = errors.New("doctor: no adaptive pool in this client")
)
