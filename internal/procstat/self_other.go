// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !unix

package procstat

import "time"

func selfCPU() (time.Duration, error) { return 0, unsupported("getrusage") }
