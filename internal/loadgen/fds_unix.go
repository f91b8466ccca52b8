// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package loadgen

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fdMargin is kept free beside a layout's connections: the listener, the
// files the run writes, /proc reads, the probe connection.
const fdMargin = 64

// checkFDs fails when conns connections (one descriptor each) would not
// fit under the process's open-file limit beside those already open, a
// failure that otherwise shows only as a dial timeout.
func checkFDs(conns int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY {
		return nil
	}
	open := 0
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if es, err := os.ReadDir(dir); err == nil {
			open = len(es)
			break
		}
	}
	if need := uint64(open + conns + fdMargin); need > lim.Cur {
		return fmt.Errorf("%w: %d connections and the %d descriptors already open need %d, above the open-file limit %d (ulimit -n)",
			ErrFileLimit, conns, open, need, lim.Cur)
	}
	return nil
}
