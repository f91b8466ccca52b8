// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !unix

package pool

import "time"

// processCPU is unknown here: Signals.CPUBusy reads -1 and the policy
// treats the CPU as free.
func processCPU() (used, waited time.Duration, ok bool) { return 0, 0, false }
