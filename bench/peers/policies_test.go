// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"
	"testing"
	"time"
)

// TestPoliciesRunRealServer: every policy sizes rpclab's pool against a
// real server in a short closed loop: RPCs succeed, none fails, and the
// pool stays within 1..max.
func TestPoliciesRunRealServer(t *testing.T) {
	target, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const maxConns = 3
	for _, pol := range Policies() {
		t.Run(pol.Name, func(t *testing.T) {
			r, err := RunPolicy(ctx, target, pol, maxConns, 4, 50*time.Millisecond, 200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if r.RPS <= 0 || r.P99 <= 0 || r.Failed != 0 {
				t.Errorf("got %.0f rpc/s, p99 %v, %d failed; want RPCs that succeed", r.RPS, r.P99, r.Failed)
			}
			if r.Conns < 1 || r.Conns > maxConns || r.MaxConns < r.Conns || r.MaxConns > maxConns {
				t.Errorf("got %d connections (most %d), want within 1..%d", r.Conns, r.MaxConns, maxConns)
			}
		})
	}
	if got, want := Policies()[0].Name, "rpclab"; got != want {
		t.Errorf("first policy: got %s, want %s (the comparison's base)", got, want)
	}
}
