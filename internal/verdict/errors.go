// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import "errors"

// ErrBadSLO is wrapped by ParseSLO's errors: the objective is not of the
// form pNN=DURATION.
var ErrBadSLO = errors.New("verdict: bad latency objective")
