// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// grpc-js copies gRPC C-core's design: a channel's connections are
// subchannels taken from a process-wide subchannel pool, keyed by target,
// channel options and credentials. So a client per worker with identical
// options (channel-per-worker) shares ONE connection, as the OS shows;
// grpc.use_local_subchannel_pool (local-pool, and per-worker, which uses the
// same option) or a unique channel option (distinct-args) gives each worker
// its own. pool:N is N channels with local subchannel pools.
func init() { expectations["node"] = cCoreStyle }

// TestNodeDirect: see testDirect (java_test.go).
func TestNodeDirect(t *testing.T) { testDirect(t, "node") }

// TestNodeUnit runs the Node client's own tests (flags, durations, and the
// histogram encoding compared byte for byte with hdrhistogram-go's) with
// node's built-in test runner.
func TestNodeUnit(t *testing.T) {
	selected(t, "node")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "bash", filepath.Join("..", "node", "build.sh"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	// Files, not a folder: node 21+ reads --test arguments as globs.
	files, err := filepath.Glob(filepath.Join("..", "node", "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no clients/node/test/*.test.js (%v)", err)
	}
	for i, f := range files {
		files[i] = filepath.Join("test", filepath.Base(f))
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{"--test"}, files...)...)
	cmd.Dir = filepath.Join("..", "node")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}
