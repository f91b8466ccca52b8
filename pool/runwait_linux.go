// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// runQueueWait is the time the process's live threads have spent runnable
// but waiting for a CPU: the second field of each
// /proc/self/task/<tid>/schedstat (nanoseconds). 0 if unreadable.
func runQueueWait() time.Duration {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			sum += ns
		}
	}
	return time.Duration(sum)
}
