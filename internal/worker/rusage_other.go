// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !unix

package worker

import "time"

// rusage is zero where there is no getrusage.
func rusage() (user, sys time.Duration) { return 0, 0 }
