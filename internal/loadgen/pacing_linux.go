// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// kernelPacing: PrecisePacing runs here (unless timerfd is refused).
const kernelPacing = true

// kernelTimer is a timerfd(2) that Go's netpoller watches and nobody
// reads: arming it for a time makes the poller's wait end then, and the
// runtime then runs the Go timers due by then.
//
// Go's timers alone cannot wake an idle process sooner than the next
// whole millisecond (the runtime's netpoller waits in milliseconds), so a
// 300 µs wait takes up to 1 ms, and the send's lateness counts in its
// latency. Two other ways were measured and dropped. A nanosleep holds
// the scheduler's thread and its P: with one P, replies wait behind it,
// and 4,000 sends/s on eight connections measured a P50 of 141 ms against
// a 0.2 ms server. A goroutine parked on the timerfd's readiness was as
// precise but no cheaper (docs/peers.md, "The open loop's floor").
type kernelTimer struct {
	fd   int
	f    *os.File // registers fd with the poller, and closes it
	spec unix.ItimerSpec
}

// newKernelTimer opens a kernel timer; it fails where timerfd is refused
// (a seccomp filter, the descriptor limit), and the caller falls back to
// Go's timers.
func newKernelTimer() (*kernelTimer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	// A non-blocking descriptor: os.NewFile adds it to the poller.
	return &kernelTimer{fd: fd, f: os.NewFile(uintptr(fd), "rpclab-pacing-timerfd")}, nil
}

// arm sets the timer to expire in d > 0 (one timerfd_settime, replacing
// any earlier time): the poller's wait ends then, within the kernel's
// timer precision. Expiries are never read; each one ends a wait of the
// edge-triggered poller, and re-arming resets the count.
func (k *kernelTimer) arm(d time.Duration) {
	k.spec.Value = unix.NsecToTimespec(int64(d))
	_ = armTimer(k.fd, &k.spec)
}

// armTimer is timerfd_settime (a hook for tests).
var armTimer = func(fd int, spec *unix.ItimerSpec) error {
	return unix.TimerfdSettime(fd, 0, spec, nil)
}

func (k *kernelTimer) close() { k.f.Close() }

// precisePacing returns the wait of --pacing precise and what releases
// it, or ok false where the kernel timer cannot be had: each wait arms
// the kernel timer for its time, then waits on timerWait (a Go timer),
// which then fires on time in an idle client, and on the first wake-up a
// busy client has anyway.
func precisePacing(timerWait func(context.Context, time.Time) bool) (wait func(context.Context, time.Time) bool, release func(), ok bool) {
	k, err := newKernelTimer()
	if err != nil {
		return timerWait, func() {}, false
	}
	return func(ctx context.Context, at time.Time) bool {
		if d := time.Until(at); d > 0 {
			k.arm(d)
		}
		return timerWait(ctx, at)
	}, k.close, true
}
