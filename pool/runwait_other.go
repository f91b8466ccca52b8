// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix && !linux

package pool

import "time"

// runQueueWait is unknown outside Linux: the CPU signal counts CPU used
// only.
func runQueueWait() time.Duration { return 0 }
