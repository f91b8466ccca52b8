// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package netem

import "time"

// waker falls back to time.Sleep (millisecond precision) where timerfd is
// not available.
type waker struct{}

func newWaker() *waker                 { return &waker{} }
func (w *waker) sleep(d time.Duration) { time.Sleep(d) }
func (w *waker) close()                {}
