// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// nanosleepPacing: PrecisePacing runs here.
const nanosleepPacing = true

// nanosleepMin is the shortest wait the precise pacing sleeps through with
// nanosleep; shorter ones use Go's timer. A nanosleep holds the
// goroutine's P in a system call until the runtime's monitor hands the P to
// another thread, which a client with one P (GOMAXPROCS 1, the pinned
// client) pays for in its RPCs' latency when it happens at every send:
// with a nanosleep for waits down to 50 µs, 10000 rps on one connection
// had a P50 of 469 and 1081 µs in two runs, against 145 and 152 µs with
// timers. A client that busy checks its timers often anyway, so they are
// punctual there (schedule lag P50 about 30 µs).
const nanosleepMin = 150 * time.Microsecond

// nanosleep is the kernel sleep of precisePacing (a hook for tests).
var nanosleep = unix.Nanosleep

// precisePacing returns the wait of --pacing precise: Go's timers cannot
// wake an idle client sooner than the next whole millisecond (the
// runtime's netpoller waits in milliseconds), so waits of nanosleepMin or
// more sleep in the kernel instead (a high-resolution timer, late by the
// thread's timer slack, 50 µs by default); shorter ones use timerWait.
func precisePacing(timerWait func(context.Context, time.Time) bool) func(context.Context, time.Time) bool {
	return func(ctx context.Context, at time.Time) bool {
		for {
			d := time.Until(at)
			if d <= 0 {
				return true
			}
			if d < nanosleepMin {
				return timerWait(ctx, at)
			}
			select {
			case <-ctx.Done():
				return false
			default:
			}
			// Slices of at most 10 ms, so that a cancelled ctx is noticed;
			// EINTR: the loop sleeps the rest.
			ts := unix.NsecToTimespec(int64(min(d, 10*time.Millisecond)))
			_ = nanosleep(&ts, nil)
		}
	}
}
