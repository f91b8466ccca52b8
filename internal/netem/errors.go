// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import "errors"

// ErrLoop is wrapped by NewProxy's error when the upstream is the proxy's
// own address: each connection would dial the proxy again, until the
// process runs out of file descriptors.
var ErrLoop = errors.New("netem: the upstream is the proxy itself")
