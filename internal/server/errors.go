// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package server

import "errors"

// ErrBadOption is wrapped by the error of an option that cannot apply.
var ErrBadOption = errors.New("server: bad option")

// ErrTooLarge is wrapped by the error a bulk request gets when it asks for
// more bytes than the server's maximum size per request.
var ErrTooLarge = errors.New("server: bulk size above the maximum per request")
