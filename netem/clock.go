// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"runtime"
	"time"
)

// Clock hooks, replaced by tests with a fake clock (as grpc-go's
// benchmark/latency does). sleepUntil returns at or after t.
var (
	now        = time.Now
	sleepUntil = preciseSleepUntil
	sleep      = time.Sleep
)

// Thresholds of preciseSleepUntil. Go's timers wake up to a millisecond
// late for sub-millisecond sleeps (the runtime's poller waits in whole
// milliseconds), so long waits use a timer, the last stretch a thread sleep
// (nanosleep, ~70 µs late), and the last spinTail a yield loop.
const (
	timerSlack = 1500 * time.Microsecond
	spinTail   = 90 * time.Microsecond
)

// preciseSleepUntil sleeps until t with microsecond precision and no timer
// allocated per call: time.Sleep reuses the goroutine's own timer.
func preciseSleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		switch {
		case d <= 0:
			return
		case d > timerSlack+time.Millisecond:
			time.Sleep(d - timerSlack)
		case d > spinTail:
			threadSleep(d - spinTail)
		default:
			runtime.Gosched()
		}
	}
}
