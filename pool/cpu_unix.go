// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package pool

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of the process so far, and
// the time its threads waited runnable for a CPU (Linux only, else 0).
func processCPU() (used, waited time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), runQueueWait(), true
}
