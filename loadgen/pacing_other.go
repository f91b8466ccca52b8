// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package loadgen

import (
	"context"
	"time"
)

// nanosleepPacing: PrecisePacing falls back to TimerPacing here.
const nanosleepPacing = false

// precisePacing is the timer's wait where there is no nanosleep to use.
func precisePacing(timerWait func(context.Context, time.Time) bool) func(context.Context, time.Time) bool {
	return timerWait
}
