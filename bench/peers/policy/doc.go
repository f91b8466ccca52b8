// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package policy evaluates self-sizing pools: the sizing policies of other
// pools (Spanner's dynamic channel pool, gRFC A105's stream slots, yarpc's
// connection scaling) as pool.Sizers, run beside rpclab's adaptive policy on
// rpclab's pool in a closed loop (Policies, RunPolicy; `policies run`) and,
// beside fixed sizes (FixedPolicy), in an open-loop ramp up and down on one
// pool (RunRamp; `policies ramp`). The comparisons with other tools and
// pools are package peers.
package policy

import "errors"

// ErrConns is returned for a connection count below 1.
var ErrConns = errors.New("policy: connection count must be at least 1")
