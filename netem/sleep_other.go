// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package netem

import "time"

// threadSleep falls back to time.Sleep where nanosleep is not wired up.
func threadSleep(d time.Duration) { time.Sleep(d) }
