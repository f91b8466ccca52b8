// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import "errors"

// Settings a *usage.Error from this package can name (besides loadgen's
// own); the CLI maps each to its flag.
var (
	ErrClient      = errors.New("extclient: client")
	ErrClientsDir  = errors.New("extclient: clients folder")
	ErrClientFlags = errors.New("extclient: client's flags")
)

// ErrNoClientsDir: FindClientsDir found no clients/ folder of an rpclab
// checkout.
var ErrNoClientsDir = errors.New("no clients/ folder found")

// ErrStepsFailed: the client ran, and some of its steps failed (their
// records say why). A caller that judges the records itself (rpclab
// doctor) goes on; Sweep's other errors mean the run itself went wrong.
var ErrStepsFailed = errors.New("steps failed")
