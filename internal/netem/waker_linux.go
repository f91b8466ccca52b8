// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waker sleeps a goroutine with microsecond precision: a timerfd(2) read
// through Go's poller. Unlike a Go timer (the poller waits in whole
// milliseconds, so a 50 µs sleep takes ~1 ms) or nanosleep(2) (which holds a
// thread and its P), a timerfd wakes the poller itself, ~25 µs after the
// set time. One waker serves every wait of one pipe: no timer per chunk.
type waker struct {
	fd  int
	f   *os.File
	buf [8]byte
}

func newWaker() *waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &waker{fd: -1}
	}
	return &waker{fd: fd, f: os.NewFile(uintptr(fd), "netem-timerfd")}
}

// sleep blocks for about d; it may return early only if the waker is
// closed.
func (w *waker) sleep(d time.Duration) {
	if w.f == nil {
		time.Sleep(d)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	if _, err := w.f.Read(w.buf[:]); err != nil {
		time.Sleep(d) // closed under us: the caller rechecks its state
	}
}

func (w *waker) close() {
	if w.f != nil {
		w.f.Close()
	}
}
