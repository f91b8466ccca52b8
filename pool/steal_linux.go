// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import "os"

// hostSteal is the host's steal and total CPU time so far, in clock ticks,
// from /proc/stat.
func hostSteal() (steal, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}
