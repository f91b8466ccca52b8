// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"path/filepath"
	"testing"
	"time"
)

// TestCppPoolStreamLimit is the known answer for growth at the server's
// stream limit (see TestPythonPoolStreamLimit) for rpclab::ChannelPool:
// clients/cpp/pool/tools/streamlimit.cc, built with the C++ client, against
// rpclab serve --max-concurrent-streams 4 --delay 2ms: 16 RPCs in flight
// through a pool of size 1 make 4 connections as the kernel sees them with
// growth on (max 8, 4 streams each) and 1 with it off.
func TestCppPoolStreamLimit(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	srv := serveRPCLab(t, "--max-concurrent-streams", "4", "--delay", "2ms")
	out := run(t, 3*time.Minute, filepath.Join("..", "cpp"), nil, "./build/rpclab-pool-streamlimit", srv.Addr, "2")
	checkStreamLimit(t, out, "RPCs/s")
}

// TestCppPoolRestart: see testPoolRestart (clients/cpp/pool/tools/restart.cc).
func TestCppPoolRestart(t *testing.T) {
	selected(t, "cpp")
	build(t, "cpp")
	testPoolRestart(t, filepath.Join("..", "cpp"), nil, "./build/rpclab-pool-restart")
}
