// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build race

package sidechannel

// raceEnabled: under -race, sync.Pool drops a share of what is put back on
// purpose and the detector allocates, so allocation counts mean nothing.
const raceEnabled = true
