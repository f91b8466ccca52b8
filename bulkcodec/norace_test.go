// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !race

package bulkcodec

const raceEnabled = false
