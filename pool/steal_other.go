// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package pool

// hostSteal is unknown outside Linux: Signals.Steal reads -1 and no trial
// interval is left out for it.
func hostSteal() (steal, total uint64, ok bool) { return 0, 0, false }
