// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package worker

import (
	"time"

	"golang.org/x/sys/unix"
)

// rusage is this process's user and system CPU time so far (zero where
// getrusage fails).
func rusage() (user, sys time.Duration) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
