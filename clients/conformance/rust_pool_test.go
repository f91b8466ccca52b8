// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"path/filepath"
	"testing"
	"time"
)

// rustPoolExample builds an example of the pool crate
// (clients/rust/pool/examples) in the release profile and returns its path.
func rustPoolExample(t *testing.T, name string) string {
	t.Helper()
	selected(t, "rust")
	rust, err := filepath.Abs(filepath.Join("..", "rust"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, 15*time.Minute, rust, nil, "cargo", "build", "-q", "--release", "--locked", "-p", "rpclab-pool", "--example", name)
	return filepath.Join(rust, "target", "release", "examples", name)
}

// TestRustPoolStreamLimit is the known answer for growth at the server's
// stream limit: against rpclab serve --max-concurrent-streams 4 --delay 2ms,
// 16 calls in flight through a pool of size 1 (examples/streamlimit.rs) make
// 4 connections as the kernel sees them with growth on (max 8, 4 streams
// each) and 1 with it off. The throughput ratio is logged, not asserted
// (each connection can carry 2000 calls/s; a shared host's CPU may not).
func TestRustPoolStreamLimit(t *testing.T) {
	bin := rustPoolExample(t, "streamlimit")
	srv := serveRPCLab(t, "--max-concurrent-streams", "4", "--delay", "2ms")
	out := run(t, 3*time.Minute, filepath.Join("..", "rust"), nil, bin, srv.Addr, "2")
	checkStreamLimit(t, out, "RPCs/s")
}

// TestRustPoolRestart: see testPoolRestart (examples/restart.rs).
func TestRustPoolRestart(t *testing.T) {
	bin := rustPoolExample(t, "restart")
	testPoolRestart(t, filepath.Join("..", "rust"), nil, bin)
}
