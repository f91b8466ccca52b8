// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import "testing"

// tonic opens a connection per Channel (Endpoint::connect) and multiplexes
// every call of a Channel and its clones on it: shared is one connection
// whatever the in-flight count, per-worker one per worker, pool:N is N.
func init() { expectations["rust"] = ownConnPerChannel }

// TestRustDirect: see testDirect (java_test.go).
func TestRustDirect(t *testing.T) { testDirect(t, "rust") }

// TestRustUnit runs the Rust client's own tests (flags, durations, dates,
// histogram encoding) in the release profile build.sh already compiled.
func TestRustUnit(t *testing.T) {
	selected(t, "rust")
	build(t, "rust")
	unitTests(t, "rust", "cargo", "test", "-q", "--release", "--locked")
}
