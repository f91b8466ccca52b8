// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"syscall"
	"time"
)

// threadSleep blocks the calling thread for d with nanosleep(2), which
// wakes within the kernel's timer slack (50 µs by default) instead of Go's
// millisecond-grained poller.
func threadSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
