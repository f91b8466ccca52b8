// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"runtime"
	"time"
)

// Clock hooks, replaced by tests with a fake clock (as grpc-go's
// benchmark/latency does). sleepUntil returns at or after t, sleeping on w.
var (
	now        = time.Now
	sleepUntil = preciseSleepUntil
)

// wakeLatency is how late a waker typically wakes; preciseSleepUntil sets
// it this much early and yields for the rest, so it is never early and
// rarely more than a few microseconds late.
const wakeLatency = 60 * time.Microsecond

// preciseSleepUntil sleeps until t with microsecond precision and no timer
// allocated per call.
func preciseSleepUntil(w *waker, t time.Time) {
	for {
		d := time.Until(t)
		switch {
		case d <= 0:
			return
		case d > wakeLatency:
			w.sleep(d - wakeLatency)
		default:
			runtime.Gosched()
		}
	}
}
