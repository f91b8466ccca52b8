// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import "errors"

var (
	// ErrUnknownFormat: the input is none of the formats Formats lists.
	ErrUnknownFormat = errors.New("foreign: not a format rpclab import knows")
	// ErrBadInput: the input is of a known format but a line of it is
	// wrong (the error names the line).
	ErrBadInput = errors.New("foreign: bad input")
)
