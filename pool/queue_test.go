// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// streamLimitServer serves one RPC at a time per connection and holds
// each answer for d on a timer (no CPU): one connection carries at most
// 1/d RPCs a second, and the right pool size is the RPCs in flight.
func streamLimitServer(t *testing.T, d time.Duration) string {
	t.Helper()
	hold := func(ctx context.Context) {
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
		}
	}
	return pooltest.Serve(t, pooltest.NewServer(&pooltest.Ping{Hold: hold}, grpc.MaxConcurrentStreams(1)))
}

// queueRule is a rule on the real clock with short periods, for which no
// write wait is ever long enough: only a queue can start a trial.
func queueRule(maxConns int) adapt.Rule {
	r := adapt.DefaultRule(1, maxConns)
	r.Interval = 50 * time.Millisecond
	r.WriteWait = time.Hour
	r.Trial = 4 * r.Interval
	r.Cooldown = r.Interval
	r.MaxBackoff = 4 * r.Interval
	return r
}

// Against a server's limit of one stream per connection, with two RPCs
// in flight, the RPCs queue inside grpc-go for the stream and no write
// waits: the queue signal starts a trial, the trial measures the second
// connection's gain (about 2x) and keeps it, and the pool stops there (two
// RPCs in flight on two connections queue no more). The kernel sees two
// connections.
func TestAdaptiveGrowsAtStreamLimit(t *testing.T) {
	addr := streamLimitServer(t, 2*time.Millisecond)
	ctx := pooltest.Context(t)
	p := newPool(t, addr, withRule(queueRule(4)))
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	l := startLoad(ctx, p, 2)
	defer l.stop()
	kept := func() bool {
		for _, e := range p.Stats().Events {
			if e.Reason == adapt.ReasonGain || e.Reason == adapt.ReasonFaster {
				return true
			}
		}
		return false
	}
	waitFor(ctx, t, "a kept trial", kept)
	ev := p.Stats().Events
	var queued bool
	for _, e := range ev {
		queued = queued || (e.Reason == adapt.ReasonQueue && e.From == 1 && e.To == 2)
		if e.To > 2 {
			t.Errorf("grew past the RPCs in flight: %+v", e)
		}
	}
	if !queued {
		t.Errorf("no growth from 1 to 2 for %q in %v", adapt.ReasonQueue, ev)
	}
	if got := len(p.Stats().Conns); got != 2 {
		t.Errorf("size after the kept trial: got %d, want 2", got)
	}
	if n, err := pooltest.ConnsTo(addr); err != nil || n != 2 {
		t.Errorf("connections the kernel sees: got %d (%v), want 2", n, err)
	}
	if n, codes := l.failures(); n != 0 {
		t.Errorf("failed RPCs: %d %v", n, codes)
	}
}
