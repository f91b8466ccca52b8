// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
)

// tonic opens a connection per Channel (Endpoint::connect) and multiplexes
// every call of a Channel and its clones on it: shared is one connection
// whatever the in-flight count, per-worker one per worker, pool:N is N
// (the client's pool is the rpclab-pool crate, clients/rust/pool). The pool
// is asserted at 4, issue 28's size, in place of ownConnPerChannel's pool:2:
// TestClients matches every pool record against every pool expectation.
func init() {
	exps := append([]Expectation(nil), ownConnPerChannel...)
	for i := range exps {
		if exps[i].Conn == "pool:2" {
			exps[i] = Expectation{Conn: "pool:4", Conns: func(int) int { return 4 }}
		}
	}
	expectations["rust"] = exps
}

// TestRustDirect: see testDirect (java_test.go).
func TestRustDirect(t *testing.T) { testDirect(t, "rust") }

// TestRustUnit runs the Rust client's own tests (command line, steps file against
// the schema, dates, histogram encoding) in the release profile build.sh
// already compiled.
func TestRustUnit(t *testing.T) {
	selected(t, "rust")
	build(t, "rust")
	unitTests(t, "rust", "cargo", "test", "-q", "--release", "--locked")
}

// TestRustPoolUnit runs the tests of the pool crate (clients/rust/pool,
// rpclab_pool::Pool, a tower Service over N tonic Channels) against a real
// tonic server on loopback: N connections as the server accepted them,
// round robin, least-loaded, a server restart, bad sizes, and tonic's
// balance_list with a repeated address giving one connection.
func TestRustPoolUnit(t *testing.T) {
	selected(t, "rust")
	build(t, "rust")
	unitTests(t, "rust", "cargo", "test", "-q", "--release", "--locked", "-p", "rpclab-pool")
}

// TestRustPoolLeastLoaded: see testPoolLeastLoaded.
func TestRustPoolLeastLoaded(t *testing.T) { testPoolLeastLoaded(t, "rust") }

// testPoolLeastLoaded runs lang's client with pool:2:least-loaded (which
// rpclab sweep does not pass to a non-Go client) straight against a server:
// every step succeeds and its record says the pool picked least-loaded.
func testPoolLeastLoaded(t *testing.T, lang string) {
	selected(t, lang)
	build(t, lang)
	addr, rpcs := countingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := exec.CommandContext(ctx, filepath.Join("..", lang, "rpclab-client"), stepsArgs(t, &loadgen.Spec{Target: addr,
		RPCs: []string{loadgen.Unary, loadgen.Streaming}, Inflight: []int{4}, Warmup: 100 * time.Millisecond,
		Interval: 300 * time.Millisecond}, []string{"pool:2:least-loaded"}, out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for _, r := range recs {
		got := []any{r.Status, r.Spec.ConnMode, r.Spec.Pick, r.Spec.ConnsRequested}
		want := []any{result.StatusOK, "pool", "least-loaded", 2}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s record: got status, conn_mode, pick, conns_requested %v, want %v (%s)", r.Spec.RPC, got, want, r.Error)
				break
			}
		}
		if r.Requests == 0 {
			t.Errorf("%s record: got 0 requests, want some", r.Spec.RPC)
		}
	}
	if rpcs.Load() == 0 {
		t.Errorf("the server got no RPCs")
	}
}
