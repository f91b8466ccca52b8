// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"errors"
	"fmt"

	"github.com/rpclab/rpclab/loadgen"
)

// Settings a *loadgen.UsageError from this package can name (besides
// loadgen's own); the CLI maps each to its flag.
var (
	ErrClient      = errors.New("client")
	ErrClientsDir  = errors.New("clients folder")
	ErrClientFlags = errors.New("client's flags")
)

// ErrNoClientsDir: FindClientsDir found no clients/ folder of an rpclab
// checkout.
var ErrNoClientsDir = errors.New("no clients/ folder found")

func usageErr(setting error, format string, args ...any) error {
	return &loadgen.UsageError{Setting: setting, Err: fmt.Errorf(format, args...)}
}
