// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package procstat

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// selfCPU is this process's user plus system CPU time (getrusage, no file
// I/O).
func selfCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("procstat: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
