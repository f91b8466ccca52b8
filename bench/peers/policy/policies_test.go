// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/testserver"
)

// TestPoliciesRunRealServer: every policy sizes rpclab's pool against a
// real server in a short closed loop: RPCs succeed, none fails, and the
// pool stays within 1..max.
func TestPoliciesRunRealServer(t *testing.T) {
	target, _ := testserver.CountingPing(t)
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
			if r.Start.IsZero() {
				t.Errorf("no start of the measured interval")
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

// TestRunPolicyOverLink: RunPolicyOver puts the link on each connection
// the pool dials and sends the payload each way. At 4 Mbit/s each way and
// 5000 B a ping, one connection carries at most 100 pings a second (500
// kB/s), whatever the host's speed; Spanner's policy stays at one
// connection with 4 in flight (its watermark is 25), so the run measures
// at most that, where the same run without the link measures far more. A
// negative payload is refused.
func TestRunPolicyOverLink(t *testing.T) {
	target, _ := testserver.CountingPing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spanner := Policies()[1]
	if spanner.Name != "spanner" {
		t.Fatalf("policy 1 is %s, want spanner", spanner.Name)
	}
	const payload, bps = 5000, 4_000_000
	link := Link{Net: netem.Symmetric(netem.Link{RateBps: bps}), Payload: payload}
	capacity := float64(bps) / 8 / payload // pings a second on one connection
	r, err := RunPolicyOver(ctx, target, spanner, 4, 4, 100*time.Millisecond, time.Second, link)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxConns != 1 || r.Failed != 0 || r.RPS <= 0 {
		t.Fatalf("got %.0f rpc/s on at most %d connections, %d failed; want RPCs on one", r.RPS, r.MaxConns, r.Failed)
	}
	if r.RPS > 1.1*capacity {
		t.Errorf("over the link: got %.0f rpc/s, want at most the link's %.0f (+10%%): the link is not on the connection", r.RPS, capacity)
	}
	free, err := RunPolicyOver(ctx, target, spanner, 4, 4, 100*time.Millisecond, time.Second, Link{Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if free.RPS <= 2*capacity {
		t.Errorf("without the link: got %.0f rpc/s, want more than twice the link's %.0f", free.RPS, capacity)
	}
	if _, err := RunPolicyOver(ctx, target, spanner, 4, 4, 0, time.Millisecond, Link{Payload: -1}); err == nil {
		t.Error("a negative payload: got no error")
	}
}
