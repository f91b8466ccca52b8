// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"path/filepath"
	"testing"
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

// TestNodePoolConns: see testPoolConnsSeen (python_test.go).
func TestNodePoolConns(t *testing.T) { testPoolConnsSeen(t, "node") }

// TestNodeUnit runs the Node client's own tests (command line, steps file, and the
// histogram encoding compared byte for byte with hdrhistogram-go's) with
// node's built-in test runner.
func TestNodeUnit(t *testing.T) {
	selected(t, "node")
	build(t, "node")
	// Files, not a folder: node 21+ reads --test arguments as globs.
	files, err := filepath.Glob(filepath.Join("..", "node", "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no clients/node/test/*.test.js (%v)", err)
	}
	for i, f := range files {
		files[i] = filepath.Join("test", filepath.Base(f))
	}
	unitTests(t, "node", "node", append([]string{"--test"}, files...)...)
}

// TestNodePoolUnit runs the tests of the pool library in clients/node/pool
// (ChannelPool, a grpc-js Channel over N channels that a client takes as its
// channelOverride) against a real grpc-js server: 4 connections as the kernel
// saw them, a loadPackageDefinition client through the pool, least-loaded, a
// server restart. It uses the client's node_modules (build.sh).
func TestNodePoolUnit(t *testing.T) {
	selected(t, "node")
	build(t, "node")
	files, err := filepath.Glob(filepath.Join("..", "node", "pool", "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no clients/node/pool/test/*.test.js (%v)", err)
	}
	for i, f := range files {
		files[i] = filepath.Join("test", filepath.Base(f))
	}
	unitTests(t, filepath.Join("node", "pool"), "node", append([]string{"--test"}, files...)...)
}
