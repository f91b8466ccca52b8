// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package loadgen

import (
	"context"
	"time"
)

// kernelPacing: PrecisePacing falls back to TimerPacing here.
const kernelPacing = false

// precisePacing is not available where there is no timerfd.
func precisePacing(timerWait func(context.Context, time.Time) bool) (func(context.Context, time.Time) bool, func(), bool) {
	return timerWait, func() {}, false
}
