// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/rpclab/rpclab/internal/result"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestSweepYDBDebugService: rpclab sweep --service ydb-debug pings YDB's
// DebugService on rpclab's own server (a child process), unary and
// streaming; every step is ok and says ydb-debug in spec.service, and
// carries the server's CPU (rpclab serve answers UsageService).
func TestSweepYDBDebugService(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--service", "ydb-debug", "--rpc", "unary,streaming", "--inflight", "1,2", "--conn", "shared",
		"--warmup", "100ms", "--interval", "300ms", "-o", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep: %v; stderr:\n%s", err, e.String())
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Requests == 0 || r.Spec.Service != "ydb-debug" || r.Spec.Server != "go" {
			t.Errorf("%s inflight=%d: status %q (%s), %d requests, service %q, server %q; want ok, ydb-debug, go",
				r.Spec.RPC, r.Spec.Inflight, r.Status, r.Error, r.Requests, r.Spec.Service, r.Spec.Server)
		}
		if sc := r.ServerCPU; sc == nil || sc.CPUNS <= 0 || sc.CPUs < 1 || sc.Busy <= 0 {
			t.Errorf("%s inflight=%d: server_cpu %+v, want the child server's CPU over the interval", r.Spec.RPC, r.Spec.Inflight, r.ServerCPU)
		}
	}
}
